// `kcast predict` (CLI.md). Placeholder until the command lands.
#include <iostream>

#include "predict/cli/commands.h"

namespace kcast::cli {

int cmd_predict(int, char**) {
  std::cerr << "kcast: 'predict' is not implemented yet\n";
  return 1;
}

}  // namespace kcast::cli
