#include "model/attention_kernel.h"

#include <regex>
#include <string>

namespace kcast {

bool runs_mma_sync(std::string_view name) {
  static const std::regex ampere_mma(
      R"(flash_(fwd|bwd)|_scaled_dot_product_flash_attention|_flash_attention_(forward|backward)|fmha_cutlass\w*_sm(75|80)|_efficient_attention)",
      std::regex::icase);
  static const std::regex native(R"(sm_?(9\d|1\d\d))", std::regex::icase);
  const std::string n(name);
  return std::regex_search(n, ampere_mma) && !std::regex_search(n, native);
}

}  // namespace kcast
