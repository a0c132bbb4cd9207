// Classifier: kernel name -> KernelClass through ordered regex rules (see model/classifier.h).
// The rules themselves are data (data/classifier_rules.csv, loaded by io/classifier_rules.cc);
// this file only compiles them once and answers look-ups, caching one answer per distinct name.
#include "model/classifier.h"

#include <mutex>
#include <regex>
#include <shared_mutex>
#include <unordered_map>

#include "model/error.h"

namespace kcast {

namespace {

// Only the head of a name is matched. Demangled C++ names repeat their template arguments in the
// parameter list, so the head carries everything the rules look at, and libstdc++'s backtracking
// regex recurses per character: bounding the input keeps a pathological name from exhausting the
// stack.
constexpr size_t kMaxMatchedChars = 4096;

// The cache is a convenience, not a store: a stream of ever-new names (fuzzing, generated kernels)
// must not grow memory without bound, so it is dropped when it gets this large.
constexpr size_t kMaxCachedNames = 1 << 16;

// Lets the cache be probed with a string_view without building a std::string.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

}  // namespace

struct Classifier::Impl {
  std::vector<std::regex> patterns;
  std::vector<KernelClass> classes;

  // classify() is const and may run on several threads: readers share the lock, a miss takes it
  // exclusively only to insert.
  mutable std::shared_mutex mutex;
  mutable std::unordered_map<std::string, KernelClass, NameHash, std::equal_to<>> cache;

  KernelClass match(std::string_view name) const {
    std::string_view head = name.substr(0, kMaxMatchedChars);
    for (size_t i = 0; i < patterns.size(); ++i)
      if (std::regex_search(head.begin(), head.end(), patterns[i])) return classes[i];
    return KernelClass::other;
  }
};

Classifier::Classifier(std::vector<ClassifierRule> rules) : impl_(std::make_unique<Impl>()) {
  impl_->patterns.reserve(rules.size());
  impl_->classes.reserve(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    const ClassifierRule& r = rules[i];
    const std::string where = r.where.empty() ? "classifier rule " + std::to_string(i + 1) : r.where;
    if (r.pattern.empty()) throw InputError(where + ": column 'pattern': empty pattern");
    try {
      impl_->patterns.emplace_back(r.pattern, std::regex::ECMAScript | std::regex::icase |
                                                  std::regex::optimize);
    } catch (const std::regex_error& e) {
      throw InputError(where + ": column 'pattern': '" + r.pattern + "' is not a valid regex (" +
                       e.what() + ")");
    }
    impl_->classes.push_back(r.cls);
  }
}

Classifier::~Classifier() = default;
Classifier::Classifier(Classifier&&) noexcept = default;
Classifier& Classifier::operator=(Classifier&&) noexcept = default;

KernelClass Classifier::classify(std::string_view name) const {
  {
    std::shared_lock lock(impl_->mutex);
    if (auto it = impl_->cache.find(name); it != impl_->cache.end()) return it->second;
  }
  // Matched outside the lock: regex_search on a const std::regex is safe to run concurrently, and
  // two threads computing the same name agree, so a duplicate insert is harmless.
  const KernelClass c = impl_->match(name);
  std::unique_lock lock(impl_->mutex);
  if (impl_->cache.size() >= kMaxCachedNames) impl_->cache.clear();
  impl_->cache.emplace(std::string(name), c);
  return c;
}

size_t Classifier::rule_count() const { return impl_->patterns.size(); }

}  // namespace kcast
