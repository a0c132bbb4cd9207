// `kcast synth` (CLI.md). Placeholder until the command lands.
#include <iostream>

#include "predict/cli/commands.h"

namespace kcast::cli {

int cmd_synth(int, char**) {
  std::cerr << "kcast: 'synth' is not implemented yet\n";
  return 1;
}

}  // namespace kcast::cli
