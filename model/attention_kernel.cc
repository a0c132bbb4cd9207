#include "model/attention_kernel.h"

#include <cctype>
#include <regex>
#include <string>
#include <unordered_map>

namespace kcast {

namespace {

// Case-insensitive substring test without a copy: the regex below (icase, per-character locale
// lookups) costs far more than the kernel-list reader's other work, so it only sees names that
// contain one of its words.
bool contains_ci(std::string_view s, std::string_view lower_word) {
  if (s.size() < lower_word.size()) return false;
  for (size_t i = 0; i + lower_word.size() <= s.size(); ++i) {
    size_t j = 0;
    while (j < lower_word.size() && std::tolower(static_cast<unsigned char>(s[i + j])) == lower_word[j]) ++j;
    if (j == lower_word.size()) return true;
  }
  return false;
}

}  // namespace

bool runs_mma_sync(std::string_view name) {
  if (!contains_ci(name, "flash") && !contains_ci(name, "fmha") && !contains_ci(name, "efficient_attention"))
    return false;
  // A trace repeats a few attention kernels many times: remember the answer per name (per thread,
  // bounded).
  thread_local std::unordered_map<std::string, bool> seen;
  const std::string n(name);
  if (auto it = seen.find(n); it != seen.end()) return it->second;
  if (seen.size() >= 4096) seen.clear();
  static const std::regex ampere_mma(
      R"(flash_(fwd|bwd)|_scaled_dot_product_flash_attention|_flash_attention_(forward|backward)|fmha_cutlass\w*_sm(75|80)|_efficient_attention)",
      std::regex::icase);
  static const std::regex native(R"(sm_?(9\d|1\d\d))", std::regex::icase);
  return seen[n] = std::regex_search(n, ampere_mma) && !std::regex_search(n, native);
}

}  // namespace kcast
