// Writing the result CSV (docs/MICROBENCH.md): RFC 4180 quoting, shortest round-trip numbers, and an
// atomic file replace (kcast's own, io/atomic_file.cc) so a failed or interrupted run never
// destroys an existing result file. CUDA-free, so kcast's tests can check that its reader accepts exactly
// what this tool writes.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "microbench/result_row.h"

namespace kcast::microbench {

inline constexpr const char* kCsvHeader = "benchmark,dtype,size,value,unit,spread,device,notes";

namespace csv_detail {

inline std::string quoted(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

// Shortest text that parses back to the same double; empty for NaN (a cell left blank).
inline std::string number(double v) {
  if (std::isnan(v)) return "";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : std::string();
}

}  // namespace csv_detail

inline void write_csv(std::ostream& out, const std::vector<Row>& rows, const std::string& device) {
  using csv_detail::number;
  using csv_detail::quoted;
  out << kCsvHeader << '\n';
  for (const Row& r : rows)
    out << quoted(r.benchmark) << ',' << quoted(r.dtype) << ',' << quoted(r.size) << ','
        << number(r.value) << ',' << quoted(r.unit) << ',' << number(r.spread) << ','
        << quoted(device) << ',' << quoted(r.notes) << '\n';
}

// Writes to `path` atomically (io/atomic_file.h: devices and links as a shell's `>` treats
// them); throws an error naming the path on failure.
inline void write_csv_file(const std::string& path, const std::vector<Row>& rows,
                           const std::string& device) {
  write_file_atomically(path, [&](std::ostream& o) { write_csv(o, rows, device); });
}

}  // namespace kcast::microbench
