// `kcast import` (CLI.md). Placeholder until the command lands.
#include <iostream>

#include "predict/cli/commands.h"

namespace kcast::cli {

int cmd_import(int, char**) {
  std::cerr << "kcast: 'import' is not implemented yet\n";
  return 1;
}

}  // namespace kcast::cli
