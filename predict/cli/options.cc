#include "predict/cli/options.h"

#include <iostream>

#include "model/error.h"

namespace kcast::cli {

bool parse_options(int argc, char** argv, const std::string& usage, po::options_description& opts,
                   const po::positional_options_description& pos, po::variables_map& vm) {
  opts.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n" << opts << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string(argv[0]) + ": " + e.what() + " (see 'kcast " + argv[0] + " --help')");
  }
  return true;
}

Format parse_format(const std::string& s) {
  if (s == "table") return Format::table;
  if (s == "csv") return Format::csv;
  if (s == "json") return Format::json;
  throw InputError("option '--format': '" + s + "' is not one of table, csv, json");
}

}  // namespace kcast::cli
