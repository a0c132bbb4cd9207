// The kcast subcommands (docs/cli-contract.md). Each lives in its own cmd_<name>.cc and returns the exit code.
// Errors thrown as InputError / usage errors are turned into "kcast: ..." and exit 2 by main().
#pragma once
#include <string_view>
#include <vector>

namespace kcast::cli {

int cmd_gpus(int argc, char** argv);
int cmd_classify(int argc, char** argv);
int cmd_import(int argc, char** argv);
int cmd_calibrate(int argc, char** argv);
int cmd_predict(int argc, char** argv);
int cmd_whatif(int argc, char** argv);
int cmd_validate(int argc, char** argv);
int cmd_synth(int argc, char** argv);
int cmd_serve(int argc, char** argv);
int cmd_plan(int argc, char** argv);


// The command table the driver (predict/main.cc) and the Python module (python/) dispatch on.
struct Command {
  std::string_view name;
  int (*run)(int, char**);
  std::string_view summary;
};
const std::vector<Command>& commands();
const Command* find_command(std::string_view name);  // null when unknown

}  // namespace kcast::cli
