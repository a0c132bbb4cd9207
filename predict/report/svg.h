// Inline SVG charts for the HTML reports: plain strings, no scripts, no external references (an
// inline <svg> in HTML5 needs no namespace URL), so a page renders offline in any browser.
#pragma once
#include <string>
#include <vector>

namespace kcast::report {

// A stacked bar: one value per series, in series order.
struct StackedBar {
  std::string label;
  std::vector<double> values;
};
// Vertical stacked bars with a legend; values in µs (the axis picks µs, ms or s).
std::string stacked_bar_chart(const std::string& title, const std::vector<std::string>& series,
                              const std::vector<std::string>& colors, const std::vector<StackedBar>& bars);

struct Point2 {
  double x, y;
  std::string label;  // drawn beside the point when non-empty
};
// A polyline through the points, with an optional dashed horizontal reference (ref_y) and vertical
// reference (ref_x); NaN = none. y values are µs (the axis picks µs, ms or s) unless `y_is_time` is
// false (then plain numbers, y_label naming their unit).
std::string line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                       const std::vector<Point2>& points, double ref_x, double ref_y, bool y_is_time = true);
// Labelled points with the y = x diagonal (for "predicted speedup vs peak ratio").
std::string scatter_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                          const std::vector<Point2>& points);

// A fixed palette, cycled.
std::string palette_color(size_t i);

}  // namespace kcast::report
