// `kcast classify [FILE|-]`: one kernel name per line in, "<class>\t<name>" out, in input order.
#include <fstream>
#include <iostream>

#include "io/console.h"
#include "io/classifier_rules.h"
#include "model/error.h"
#include "predict/cli/commands.h"
#include "predict/cli/options.h"

namespace kcast::cli {

int cmd_classify(int argc, char** argv) {
  po::options_description opts("kcast classify options");
  std::string file = "-";
  opts.add_options()("input", po::value(&file)->default_value("-"), "file of kernel names, or - for stdin");
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv, "kcast classify [FILE|-]", opts, pos, vm)) return 0;
  std::ifstream f;
  if (file != "-") {
    f.open(file);
    if (!f) throw InputError(file + ": cannot open");
  }
  std::istream& in = file == "-" ? std::cin : f;
  const Classifier& c = default_classifier();
  std::string line;
  std::string out;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    out.clear();
    out += to_string(c.classify(line));
    out += '\t';
    out += line;
    out += '\n';
    console_out() << out;
  }
  return 0;
}

}  // namespace kcast::cli
