#include "io/csv_source.h"

#include <charconv>
#include <cmath>

#include "model/error.h"

namespace kcast {

std::string CellRef::where() const {
  return std::string(file) + ":" + std::to_string(line) + ": column '" + std::string(column) + "'";
}

namespace {
std::string_view trimmed(const char* text) {
  std::string_view s = text ? std::string_view(text) : std::string_view();
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
}  // namespace

bool parse_double_cell(const char* text, const CellRef& at, double& out) {
  std::string_view s = trimmed(text);
  if (s.empty()) return false;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
    throw InputError(at.where() + ": '" + std::string(s) + "' is not a finite number");
  out = v;
  return true;
}

bool parse_int_cell(const char* text, const CellRef& at, int64_t& out) {
  std::string_view s = trimmed(text);
  if (s.empty()) return false;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) {
    // Accept integral floats such as "128.0" that some exporters write.
    double d = 0;
    auto [q, ec2] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (ec2 == std::errc() && q == s.data() + s.size() && std::isfinite(d) && d == std::floor(d) &&
        std::fabs(d) < 9e15) {
      out = int64_t(d);
      return true;
    }
    throw InputError(at.where() + ": '" + std::string(s) + "' is not an integer");
  }
  out = v;
  return true;
}

}  // namespace kcast
