"""Builds kcast's Python extension (kcast._kcast) with the project's CMake build; see pyproject.toml."""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures the repository's CMakeLists.txt for the interpreter running the build, builds the
    `_kcast` target only, and puts the module where setuptools packages it."""

    def build_extension(self, ext):
        build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, *generator, "-DCMAKE_BUILD_TYPE=Release",
                               "-DKCAST_BUILD_TESTS=OFF", "-DKCAST_BUILD_BENCH=OFF", "-DKCAST_BUILD_MICROBENCH=OFF",
                               "-DKCAST_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"])
        jobs = os.environ.get("KCAST_JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "_kcast", "-j", jobs])
        built = glob.glob(os.path.join(build_dir, "python", "kcast", "_kcast*.so"))
        if not built:
            sys.exit("kcast: the Python module was not built (is pybind11-dev installed?)")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built[0], dest)


setup(packages=["kcast"], package_dir={"": "python"}, ext_modules=[CMakeExtension("kcast._kcast")],
      cmdclass={"build_ext": CMakeBuild})
