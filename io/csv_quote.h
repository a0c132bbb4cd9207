// RFC 4180 quoting for the CSV files kcast writes: a field with a comma, quote or line break is
// wrapped in quotes, inner quotes doubled. One definition for every writer.
#pragma once
#include <ostream>
#include <string>

namespace kcast {

inline void write_csv_field(std::ostream& o, const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) {
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

inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

}  // namespace kcast
