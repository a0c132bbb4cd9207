"""kcast from Python: the same library as the `kcast` command line, in-process.

Every function runs the kcast command of its name with the keyword arguments as its options
(``tp=2`` is ``--tp 2``, ``cuda_graph=True`` is ``--cuda-graph``, a list is comma-joined) and returns
exactly what that command's ``--format json`` prints, parsed; kernel lists come back as ``KernelList``.
Bad input raises ``KcastError`` with the CLI's message (naming the file, line, column or option).
Commands release the GIL, so threads run them in parallel. docs/python.md has the whole API.
"""
import csv
import io
import json
import os
import tempfile

from . import _kcast

__all__ = ["KcastError", "KernelList", "version", "gpus", "gpu", "read_kernels", "import_trace", "synth",
           "predict", "whatif", "calibrate", "validate", "serve", "plan", "run"]

version = _kcast.version


class KcastError(Exception):
    """A kcast command refused its input; the message is the CLI's (without the 'kcast: ' prefix)."""

    def __init__(self, message, stderr=""):
        super().__init__(message)
        self.stderr = stderr  # what the command had printed on stderr before it stopped


def run(*args):
    """Runs ``kcast ARGS...`` in-process: (stdout, stderr) text; KcastError on bad input or exit != 0."""
    rc, out, err = _kcast.run([str(a) for a in args], KcastError)
    if rc != 0:
        raise KcastError(err.strip().splitlines()[-1] if err.strip() else f"exit code {rc}", err)
    return out, err


def _flag(name):
    return "--" + name.replace("_", "-")


def _options(options):
    """Keyword arguments as command-line options, in the order given."""
    args = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        if value is True:
            args.append(_flag(name))
        elif isinstance(value, (list, tuple)):
            args += [_flag(name), ",".join(str(v) for v in value)]
        else:
            args += [_flag(name), str(value)]
    return args


def _json(*args):
    out, _ = run(*args)
    return json.loads(out)


class KernelList:
    """A kernel list (docs/formats.md), held as the text the CLI's writer makes of it."""

    def __init__(self, text):
        self._text = text
        self._rows = None

    @classmethod
    def _from_file(cls, path):
        with open(path, newline="", encoding="utf-8") as f:
            return cls(f.read())

    def _parsed(self):
        if self._rows is None:
            self._rows = list(csv.DictReader(io.StringIO(self._text)))
        return self._rows

    def __len__(self):
        return len(self._parsed())

    def __iter__(self):
        """Each row as a dict of the CSV's columns (strings; empty where not given)."""
        return iter([dict(r) for r in self._parsed()])

    def __getitem__(self, i):
        return dict(self._parsed()[i])

    def __repr__(self):
        return f"<kcast.KernelList of {len(self)} rows>"

    def to_csv(self, path):
        """Writes the list byte for byte as `kcast ... -o path` writes it."""
        with open(path, "w", newline="", encoding="utf-8") as f:
            f.write(self._text)

    def to_pandas(self):
        """A pandas DataFrame of the rows (pandas is optional: only this method needs it)."""
        import pandas  # noqa: PLC0415 - optional dependency
        return pandas.read_csv(io.StringIO(self._text))

    def _path(self, stack):
        """A file holding the list, for the commands that read one; removed with `stack`."""
        f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, encoding="utf-8", newline="")
        f.write(self._text)
        f.close()
        stack.append(f.name)
        return f.name


class _Files(list):
    """Temporary files of one call, removed when it ends."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self:
            try:
                os.remove(p)
            except OSError:
                pass


def _kernels_path(kernels, files):
    if isinstance(kernels, KernelList):
        return kernels._path(files)
    return os.fspath(kernels)


def _written(args):
    """Runs a command that writes a kernel list (its `-o` goes to a temporary file): (KernelList, stdout)."""
    with tempfile.TemporaryDirectory(prefix="kcast-") as d:
        out = os.path.join(d, "out.csv")
        stdout, _ = run(*args, "-o", out)
        return KernelList._from_file(out), stdout


def gpus():
    """Every GPU of the database: the list `kcast gpus --format json` prints under "gpus"."""
    return _json("gpus", "--format", "json")["gpus"]


def gpu(name):
    """One GPU (any alias): the object `kcast gpus NAME --format json` prints."""
    return _json("gpus", name, "--format", "json")


def read_kernels(path):
    """A kernel-list CSV, read and checked as `kcast predict` reads it (errors name file, line, column)."""
    return _written(["import", os.fspath(path), "--from", "kcast-csv"])[0]


def import_trace(path, fmt="auto", **options):
    """`kcast import PATH --from FMT [options]`: a trace (nsys, ncu, PyTorch profiler) as a KernelList."""
    return _written(["import", os.fspath(path), "--from", fmt, *_options(options)])[0]


def synth(model=None, gpus=None, **options):
    """`kcast synth MODEL [options]` (or ``config=HF.json``): the KernelList; with ``gpus=[...]`` also the
    predicted step of each GPU as `--format json` prints it: (KernelList, [step, ...])."""
    if gpus is not None and not isinstance(gpus, str):
        gpus = list(gpus)
    args = ["synth"] + ([model] if model else []) + _options(options)
    if gpus:
        args += ["--gpu", gpus if isinstance(gpus, str) else ",".join(gpus), "--format", "json"]
    lst, stdout = _written(args)
    return (lst, json.loads(stdout)) if gpus else lst


def predict(kernels, gpus, mode="auto", **options):
    """`kcast predict --kernels ... --gpu ... --mode MODE --format json`: its object."""
    with _Files() as files:
        g = gpus if isinstance(gpus, str) else ",".join(gpus)
        return _json("predict", "--kernels", _kernels_path(kernels, files), "--gpu", g, "--mode", mode,
                     "--format", "json", *_options(options))


def whatif(kernels, gpu, set=None, scale=None, sweep=None, walls=False, **options):  # noqa: A002 - the CLI's name
    """`kcast whatif` with ``set={"dram_bw": 4000}``, ``scale={"tensor_flops": 2}``, ``sweep="dram_bw=2000:6000:5"``,
    ``walls=True``: the object its `--format json` prints."""
    with _Files() as files:
        args = ["whatif", "--kernels", _kernels_path(kernels, files), "--gpu", gpu, "--format", "json"]
        for k, v in (set or {}).items():
            args += ["--set", f"{k}={v}"]
        for k, v in (scale or {}).items():
            args += ["--scale", f"{k}={v}"]
        if sweep:
            args += ["--sweep", sweep if isinstance(sweep, str) else "{}={}:{}:{}".format(*sweep)]
        if walls:
            args.append("--walls")
        return _json(*args, *_options(options))


def calibrate(measurements, output, microbench=None, **options):
    """`kcast calibrate --measurements ... -o OUTPUT`: fits and writes the model; returns the written
    model.json, parsed (the file is the command's output)."""
    args = ["calibrate", "--measurements", *[os.fspath(m) for m in _list(measurements)]]
    if microbench:
        args += ["--microbench", *[os.fspath(m) for m in _list(microbench)]]
    run(*args, "-o", os.fspath(output), *_options(options))
    with open(output, encoding="utf-8") as f:
        return json.load(f)


def validate(measurements, **options):
    """`kcast validate --measurements ... --format json`: its object."""
    return _json("validate", "--measurements", *[os.fspath(m) for m in _list(measurements)], "--format", "json",
                 *_options(options))


def serve(model=None, gpus=None, **options):
    """`kcast serve MODEL --gpu ... [options] --format json`: one object per GPU and load point (a list
    when there are several), as the CLI prints it. ``concurrency=[1, 8]`` / ``request_rate=[...]``."""
    args = ["serve"] + ([model] if model else [])
    if gpus:
        args += ["--gpu", gpus if isinstance(gpus, str) else ",".join(gpus)]
    return _json(*args, *_options(options), "--format", "json")


def plan(kind, model=None, gpu=None, **options):
    """`kcast plan train|serve MODEL --gpu G [options] --format json`: the candidates, best first."""
    if kind not in ("train", "serve"):
        raise KcastError(f"plan: '{kind}' is not one of train, serve")
    args = ["plan", kind] + ([model] if model else []) + (["--gpu", gpu] if gpu else [])
    return _json(*args, *_options(options), "--format", "json")


def _list(x):
    return [x] if isinstance(x, (str, os.PathLike)) else list(x)
