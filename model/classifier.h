// Classifier: kernel name -> KernelClass through ordered rules kept as data (data/classifier_rules.csv).
// The first rule whose pattern matches (case-insensitive ECMAScript regex, searched anywhere in the
// name) wins; no match is `other`. Results are cached per name, so a trace with thousands of launches
// of a few hundred kernels classifies each name once.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/kernel_class.h"

namespace kcast {

struct ClassifierRule {
  std::string pattern;
  KernelClass cls;
  std::string where = {};  // "FILE:LINE" of the rule, for error messages; empty -> "classifier rule N"
};

class Classifier {
 public:
  explicit Classifier(std::vector<ClassifierRule> rules);  // throws InputError on a bad regex
  ~Classifier();
  Classifier(Classifier&&) noexcept;
  Classifier& operator=(Classifier&&) noexcept;

  KernelClass classify(std::string_view name) const;
  size_t rule_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kcast
