#include "model/attention_kernel.h"

#include <regex>
#include <string>
#include <unordered_map>

#include "model/ascii_lower.h"

namespace kcast {

bool runs_mma_sync(std::string_view name) {
  // The regex below (icase: per-character locale lookups) costs far more than the kernel-list reader's
  // other work, so it only sees names that contain one of its words.
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
