// Loads the kernel-name classifier rules (data/classifier_rules.csv: columns class,pattern,note; ordered,
// first match wins) and provides the process-wide default classifier built from them.
#pragma once
#include <string>
#include <vector>

#include "model/classifier.h"

namespace kcast {

// Parses rules CSV text. `file` names the source in error messages. Lines starting with '#' and
// blank lines are comments. An unknown class, an empty or invalid pattern throws InputError naming
// FILE:LINE and the column.
std::vector<ClassifierRule> parse_classifier_rules(const std::string& text, const std::string& file);

// Parses and compiles the rules in one step.
Classifier load_classifier(const std::string& text, const std::string& file);

// Built once, on first use, from data_file("classifier_rules.csv") ($KCAST_DATA_DIR overrides the
// embedded copy). Thread-safe: a function-local static.
const Classifier& default_classifier();

}  // namespace kcast
