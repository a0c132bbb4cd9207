#include "model/copy_kind.h"

#include <string>

#include "model/ascii_lower.h"

namespace kcast {

CopyKind copy_kind_of(std::string_view name) {
  const std::string n = ascii_lower(name);
  auto has = [&](const char* w) { return n.find(w) != std::string::npos; };
  if (has("peer") || has("ptop")) return CopyKind::peer;
  if (has("host") || has("htod") || has("dtoh") || has("htoh") || has("htoa") || has("atoh")) return CopyKind::host;
  return CopyKind::device;
}

}  // namespace kcast
