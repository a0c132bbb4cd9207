#include "model/row_kernel.h"

#include <regex>
#include <string>

namespace kcast {

bool reads_rows_once(std::string_view name) {
  // Inductor names start with triton_per_ (persistent) or triton_red_ (a loop over the row, which
  // reads it again); the hand-written layer/RMS norms are Python functions named
  // _<op>_forward_kernel. Liger's _group_norm_forward_kernel is not one of them: it sweeps each
  // group twice in BLOCK_SIZE chunks (statistics, then the normalized output); nor is its
  // _softmax_multi_block_forward_kernel (rows longer than one block).
  static const std::regex once(
      R"(^triton_per_|^_\w*(rms|layer)_?norm\w*_(forward|fwd)(_kernel)?$|^_softmax_single_block_forward_kernel$)",
      std::regex::icase);
  return std::regex_search(std::string(name), once);
}

}  // namespace kcast
