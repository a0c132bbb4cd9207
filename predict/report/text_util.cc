#include "predict/report/text_util.h"

#include <cmath>
#include <cstdio>

namespace kcast::report {

std::string fmt(double v, int precision) {
  if (std::isnan(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", precision, v);
  return b;
}

std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string csv_cell(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

std::string html_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string human_time(double us) {
  if (std::isnan(us)) return "-";
  const double a = std::fabs(us);
  char b[64];
  if (a >= 1e6) std::snprintf(b, sizeof b, "%.3g s", us / 1e6);
  else if (a >= 1e3) std::snprintf(b, sizeof b, "%.3g ms", us / 1e3);
  else std::snprintf(b, sizeof b, "%.3g us", us);
  return b;
}

}  // namespace kcast::report
