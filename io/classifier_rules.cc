#include "io/classifier_rules.h"

#include "io/csv_source.h"
#include "io/embedded_data.h"
#include "model/error.h"

namespace kcast {

std::vector<ClassifierRule> parse_classifier_rules(const std::string& text, const std::string& file) {
  // Comments let the rules file carry section headers; patterns with commas must be quoted (RFC 4180).
  using Reader = io::CSVReader<3, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>,
                               io::throw_on_overflow, io::single_and_empty_line_comment<'#'>>;
  std::vector<ClassifierRule> rules;
  try {
    Reader in(file, std::make_unique<MemoryByteSource>(text));
    in.read_header(io::ignore_extra_column | io::ignore_missing_column, "class", "pattern", "note");
    for (const char* col : {"class", "pattern"})
      if (!in.has_column(col)) throw InputError(file + ":1: missing column '" + col + "'");
    char *cls = nullptr, *pattern = nullptr, *note = nullptr;
    while (in.read_row(cls, pattern, note)) {
      const std::string where = file + ":" + std::to_string(in.get_file_line());
      const std::string c = cls ? cls : "";
      auto parsed = parse_kernel_class(c);
      if (!parsed) throw InputError(where + ": column 'class': unknown kernel class '" + c + "'");
      const std::string p = pattern ? pattern : "";
      if (p.empty()) throw InputError(where + ": column 'pattern': empty pattern");
      rules.push_back(ClassifierRule{p, *parsed, where});
    }
  } catch (const io::error::base& e) {
    throw InputError(std::string(e.what()));
  }
  return rules;
}

Classifier load_classifier(const std::string& text, const std::string& file) {
  return Classifier(parse_classifier_rules(text, file));
}

const Classifier& default_classifier() {
  static const Classifier c =
      load_classifier(data_file("classifier_rules.csv"), "data/classifier_rules.csv");
  return c;
}

}  // namespace kcast
