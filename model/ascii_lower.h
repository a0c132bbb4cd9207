// ASCII lowercase copy of a name: kernel, dtype, GPU and model names are matched case-insensitively.
#pragma once
#include <cctype>
#include <string>
#include <string_view>

namespace kcast {

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace kcast
