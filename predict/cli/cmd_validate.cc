// `kcast validate` (CLI.md). Placeholder until the command lands.
#include <iostream>

#include "predict/cli/commands.h"

namespace kcast::cli {

int cmd_validate(int, char**) {
  std::cerr << "kcast: 'validate' is not implemented yet\n";
  return 1;
}

}  // namespace kcast::cli
