#include "model/copy_kind.h"

#include "model/ascii_lower.h"

namespace kcast {

CopyKind copy_kind_of(std::string_view name) {
  auto has = [&](std::string_view w) { return contains_ci(name, w); };
  if (has("peer") || has("ptop")) return CopyKind::peer;
  if (has("host") || has("htod") || has("dtoh") || has("htoh") || has("htoa") || has("atoh")) return CopyKind::host;
  return CopyKind::device;
}

}  // namespace kcast
