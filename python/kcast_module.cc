// The `kcast._kcast` extension: runs a kcast command in-process, as the CLI would with the same
// arguments, and returns what it printed. Every piece of logic — option parsing and validation,
// synthesis, prediction, the JSON — is the CLI's own (predict/cli/); python/kcast/__init__.py turns
// keyword arguments into the command line and parses the JSON. The GIL is released while the command
// runs, and each thread prints into its own strings (io/console.h), so commands run in parallel.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "io/console.h"
#include "model/error.h"
#include "predict/cli/commands.h"

namespace py = pybind11;

namespace {

// (exit code, stdout, stderr) of `kcast <args...>`; a bad input raises KcastError with the CLI's message.
std::tuple<int, std::string, std::string> run(const std::vector<std::string>& args, py::object error_type) {
  if (args.empty()) throw std::invalid_argument("kcast: no command");
  const kcast::cli::Command* cmd = kcast::cli::find_command(args[0]);
  if (!cmd) {
    PyErr_SetString(error_type.ptr(), ("unknown command '" + args[0] + "'").c_str());
    throw py::error_already_set();
  }
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (std::string& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  int rc = 0;
  std::string failure;
  {
    py::gil_scoped_release unlocked;
    kcast::ConsoleCapture capture(out, err);
    try {
      rc = cmd->run(int(storage.size()), argv.data());
    } catch (const kcast::InputError& e) {
      failure = e.what();
    } catch (const std::exception& e) {
      failure = std::string("internal error: ") + e.what();
    }
  }
  if (!failure.empty()) {
    PyErr_SetObject(error_type.ptr(), py::make_tuple(failure, err.str()).ptr());
    throw py::error_already_set();
  }
  return {rc, out.str(), err.str()};
}

}  // namespace

PYBIND11_MODULE(_kcast, m) {
  m.doc() = "kcast's commands, run in-process (use the kcast package, not this module)";
  m.attr("version") = KCAST_VERSION;
  m.def("run", &run, py::arg("args"), py::arg("error_type"),
        "Run `kcast ARGS...` in-process: (exit code, stdout, stderr); KcastError on bad input.");
}
