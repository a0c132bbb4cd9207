// ASCII case-insensitive handling of names: kernel, dtype, GPU and model names are matched without
// regard to case. The searches take a lowercase pattern and copy nothing (the kernel-list reader asks
// them about every row's name).
#pragma once
#include <algorithm>
#include <string>
#include <string_view>

namespace kcast {

// ASCII only, inline: std::tolower is a call into the C library per character (and locale-dependent
// beyond ASCII), which the name searches below made a sixth of reading a list without work columns.
constexpr char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower_ascii(c);
  return out;
}

inline bool same_ci(char a, char lower) { return lower_ascii(a) == lower; }

// Position of the lowercase `what` in `s`, ignoring the case of `s`; npos if absent.
inline size_t find_ci(std::string_view s, std::string_view what) {
  const auto at = std::search(s.begin(), s.end(), what.begin(), what.end(), same_ci);
  return at == s.end() ? std::string_view::npos : size_t(at - s.begin());
}

inline bool contains_ci(std::string_view s, std::string_view what) { return find_ci(s, what) != std::string_view::npos; }

// Whether `s` starts (ends) with the lowercase `prefix` (`suffix`), ignoring the case of `s`.
inline bool starts_with_ci(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::equal(s.begin(), s.begin() + prefix.size(), prefix.begin(), same_ci);
}

inline bool ends_with_ci(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && std::equal(s.end() - suffix.size(), s.end(), suffix.begin(), same_ci);
}

}  // namespace kcast
