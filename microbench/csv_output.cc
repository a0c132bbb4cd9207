// CSV output of kcast-microbench; see csv_output.h.
#include "microbench/csv_output.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace kcast::microbench {

namespace {

std::string quoted(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

// Shortest text that parses back to the same double; empty for NaN (a cell left blank).
std::string number(double v) {
  if (std::isnan(v)) return "";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : std::string();
}

}  // namespace

void write_csv(std::ostream& out, const std::vector<Row>& rows, const std::string& device) {
  out << kCsvHeader << '\n';
  for (const Row& r : rows)
    out << quoted(r.benchmark) << ',' << quoted(r.dtype) << ',' << quoted(r.size) << ','
        << number(r.value) << ',' << quoted(r.unit) << ',' << number(r.spread) << ','
        << quoted(device) << ',' << quoted(r.notes) << '\n';
}

void write_csv_file(const std::string& path, const std::vector<Row>& rows, const std::string& device) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error(tmp + ": cannot create: " + std::strerror(errno));
    write_csv(f, rows, device);
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw std::runtime_error(tmp + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot replace: " + why);
  }
}

}  // namespace kcast::microbench
