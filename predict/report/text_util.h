// Small text helpers the report renderers share: number formatting, CSV and HTML escaping.
#pragma once
#include <string>
#include <string_view>

namespace kcast::report {

std::string fmt(double v, int precision = 6);  // %.{precision}g; empty for NaN
std::string fixed(double v, int decimals);     // %.{decimals}f; "-" for NaN
std::string csv_cell(std::string_view s);      // RFC 4180 quoting when needed
std::string html_escape(std::string_view s);
// Time with a readable unit: "812 us", "12.4 ms", "3.21 s".
std::string human_time(double us);

}  // namespace kcast::report
