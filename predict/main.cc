// kcast: the command-line driver. Thin by design: it picks the subcommand and maps errors to exit
// codes (2 for bad usage or input, 1 for internal failures); the work lives in predict/cli/.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string_view>

#include "io/atomic_file.h"
#include "model/error.h"
#include "predict/cli/commands.h"

namespace {

void usage(std::ostream& o) {
  o << "kcast " KCAST_VERSION " - forecast deep-learning kernel and step times on GPUs\n\n"
    << "usage: kcast <command> [options]   (kcast <command> --help for details)\n\ncommands:\n";
  for (const auto& c : kcast::cli::commands()) {
    o << "  " << c.name;
    for (size_t i = c.name.size(); i < 11; ++i) o << ' ';
    o << c.summary << "\n";
  }
  o << "\noptions:\n  -h, --help     show this help\n  --version      print the version\n"
    << "\ndocumentation (in the source tree): README.md (first page), docs/cli.md (every command and\n"
    << "option), docs/synth.md (kcast synth), docs/model.md (the cost model), docs/accuracy.md,\n"
    << "docs/formats.md (the kernel-list CSV), docs/serve.md (kcast serve), docs/cli-contract.md (the\n"
    << "command-line contract)\n";
}

}  // namespace

int main(int argc, char** argv) {
  // Ctrl-C or a kill during a long write leaves no temporary file beside the output.
  kcast::install_interrupt_cleanup();
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  const std::string_view cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    usage(std::cout);
    return 0;
  }
  if (cmd == "--version" || cmd == "-V") {
    std::cout << "kcast " KCAST_VERSION "\n";
    return 0;
  }
  for (const auto& c : kcast::cli::commands()) {
    if (c.name != cmd) continue;
    try {
      const int rc = c.run(argc - 1, argv + 1);
      // Output the shell redirected into a full disk or a closed descriptor fails only when flushed:
      // a run whose report never arrived must not exit 0.
      std::cout.flush();
      if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
        std::cerr << "kcast: <stdout>: write failed: " << std::strerror(errno) << "\n";
        return 1;
      }
      return rc;
    } catch (const kcast::InputError& e) {
      std::cerr << "kcast: " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "kcast: internal error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "kcast: unknown command '" << cmd << "' (see 'kcast --help')\n";
  return 2;
}
