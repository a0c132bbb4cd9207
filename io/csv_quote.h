// RFC 4180 quoting for the CSV files kcast writes: a field with a comma, quote or line break is
// wrapped in quotes, inner quotes doubled. One definition for every writer.
#pragma once
#include <ostream>
#include <string>

namespace kcast {

// One pass over the field (std::string::find_first_of searches the set once per character).
inline bool csv_needs_quotes(const std::string& s) {
  for (char ch : s)
    if (ch == ',' || ch == '"' || ch == '\n' || ch == '\r') return true;
  return false;
}

inline void write_csv_field(std::ostream& o, const std::string& s) {
  if (!csv_needs_quotes(s)) {
    o << s;
    return;
  }
  o << '"';
  for (char ch : s) {
    if (ch == '"') o << '"';
    o << ch;
  }
  o << '"';
}

// The same, appended to `out` (writers that build a row in a string).
inline void append_csv_field(std::string& out, const std::string& s) {
  if (!csv_needs_quotes(s)) {
    out += s;
    return;
  }
  out += '"';
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
}

inline std::string csv_field(const std::string& s) {
  std::string q;
  append_csv_field(q, s);
  return q;
}

}  // namespace kcast
