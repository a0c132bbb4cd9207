#include "model/sgemm_name.h"

#include <array>
#include <cctype>
#include <charconv>
#include <utility>

namespace kcast {

namespace {

constexpr std::array<std::pair<std::string_view, SgemmFamily>, 4> kFamilies{{
    {"maxwell", SgemmFamily::maxwell},
    {"volta", SgemmFamily::volta},
    {"turing", SgemmFamily::turing},
    {"ampere", SgemmFamily::ampere},
}};

// A positive tile extent at the start of `s`, advancing past it; 0 if none or implausible.
int32_t take_extent(std::string_view& s) {
  int32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || v <= 0 || v > 1024) return 0;
  s.remove_prefix(size_t(end - s.data()));
  return v;
}

}  // namespace

SgemmFamily sgemm_family_named(std::string_view family) {
  for (const auto& [name, f] : kFamilies)
    if (family == name) return f;
  return SgemmFamily::none;
}

SgemmTile sgemm_tile_of(std::string_view name) {
  static constexpr std::string_view kMarker = "_sgemm_";
  const size_t at = name.find(kMarker);
  if (at == std::string_view::npos) return {};
  // The family is the identifier right before the marker ("void maxwell_sgemm..." has none before it).
  size_t from = at;
  while (from > 0 && (std::isalnum(static_cast<unsigned char>(name[from - 1])) || name[from - 1] == '_')) --from;
  const SgemmFamily family = sgemm_family_named(name.substr(from, at - from));
  if (family == SgemmFamily::none) return {};
  std::string_view rest = name.substr(at + kMarker.size());
  const int32_t a = take_extent(rest);
  if (a == 0 || rest.empty() || rest[0] != 'x') return {};
  rest.remove_prefix(1);
  const int32_t b = take_extent(rest);
  if (b == 0 || (!rest.empty() && rest[0] != '_')) return {};
  SgemmTile t;
  t.m = b;  // cuBLAS's A x B is n x m in kcast's orientation
  t.n = a;
  t.family = family;
  return t;
}

}  // namespace kcast
