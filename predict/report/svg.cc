#include "predict/report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "predict/report/text_util.h"

namespace kcast::report {

namespace {

constexpr int kWidth = 760, kHeight = 380;
constexpr int kLeft = 80, kRight = 200, kTop = 40, kBottom = 70;

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `n` ticks up to `max`.
double nice_step(double max, int n) {
  if (!(max > 0)) return 1;
  const double raw = max / n;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

std::string tick_label(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return b;
}

std::string header(const std::string& title) {
  return "<svg width=\"" + std::to_string(kWidth) + "\" height=\"" + std::to_string(kHeight) +
         "\" viewBox=\"0 0 " + std::to_string(kWidth) + " " + std::to_string(kHeight) +
         "\" role=\"img\" font-family=\"sans-serif\" font-size=\"12\">\n<title>" + html_escape(title) +
         "</title>\n<text x=\"" + std::to_string(kWidth / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" "
         "font-weight=\"bold\">" + html_escape(title) + "</text>\n";
}

struct Axis {
  double lo, hi;
  double to_px_y(double v) const {
    return kTop + (kHeight - kTop - kBottom) * (1 - (v - lo) / (hi - lo));
  }
  double to_px_x(double v) const { return kLeft + (kWidth - kLeft - kRight) * (v - lo) / (hi - lo); }
};

// Y axis with grid lines from 0 to `max`; returns the axis.
Axis y_axis(std::string& s, double max, const std::string& label) {
  const double step = nice_step(max, 5);
  Axis a{0, std::max(step, std::ceil(max / step) * step)};
  for (double v = 0; v <= a.hi + step * 1e-9; v += step) {
    const double y = a.to_px_y(v);
    s += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) + "\" y1=\"" +
         num(y) + "\" y2=\"" + num(y) + "\" stroke=\"#ddd\"/>\n";
    s += "<text x=\"" + std::to_string(kLeft - 6) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" +
         tick_label(v) + "</text>\n";
  }
  s += "<text transform=\"translate(18," + std::to_string((kHeight - kBottom + kTop) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + html_escape(label) + "</text>\n";
  s += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kLeft) + "\" y1=\"" +
       std::to_string(kTop) + "\" y2=\"" + std::to_string(kHeight - kBottom) + "\" stroke=\"#333\"/>\n";
  return a;
}

Axis x_axis(std::string& s, double lo, double hi, const std::string& label) {
  if (!(hi > lo)) hi = lo + 1;
  const double step = nice_step(hi - lo, 6);
  Axis a{std::floor(lo / step) * step, std::ceil(hi / step) * step};
  if (a.hi <= a.lo) a.hi = a.lo + step;
  const int y0 = kHeight - kBottom;
  s += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) + "\" y1=\"" +
       std::to_string(y0) + "\" y2=\"" + std::to_string(y0) + "\" stroke=\"#333\"/>\n";
  for (double v = a.lo; v <= a.hi + step * 1e-9; v += step) {
    const double x = a.to_px_x(v);
    s += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"" + std::to_string(y0) + "\" y2=\"" +
         std::to_string(y0 + 5) + "\" stroke=\"#333\"/>\n";
    s += "<text x=\"" + num(x) + "\" y=\"" + std::to_string(y0 + 18) + "\" text-anchor=\"middle\">" +
         tick_label(v) + "</text>\n";
  }
  s += "<text x=\"" + std::to_string((kLeft + kWidth - kRight) / 2) + "\" y=\"" + std::to_string(kHeight - 22) +
       "\" text-anchor=\"middle\">" + html_escape(label) + "</text>\n";
  return a;
}

// Time axis unit for values up to `max_us`.
void time_unit(double max_us, double& div, std::string& unit) {
  if (max_us >= 2e6) div = 1e6, unit = "s";
  else if (max_us >= 2e3) div = 1e3, unit = "ms";
  else div = 1, unit = "us";
}

}  // namespace

std::string palette_color(size_t i) {
  static const char* const k[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                                  "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#8c564b", "#17becf"};
  return k[i % (sizeof k / sizeof k[0])];
}

std::string stacked_bar_chart(const std::string& title, const std::vector<std::string>& series,
                              const std::vector<std::string>& colors, const std::vector<StackedBar>& bars) {
  std::string s = header(title);
  double max = 0;
  for (const auto& b : bars) {
    double t = 0;
    for (double v : b.values) t += std::max(0.0, v);
    max = std::max(max, t);
  }
  double div;
  std::string unit;
  time_unit(max, div, unit);
  const Axis a = y_axis(s, max / div, "time (" + unit + ")");
  const int y0 = kHeight - kBottom;
  s += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) + "\" y1=\"" +
       std::to_string(y0) + "\" y2=\"" + std::to_string(y0) + "\" stroke=\"#333\"/>\n";
  const double slot = double(kWidth - kLeft - kRight) / std::max<size_t>(1, bars.size());
  const double w = std::min(90.0, slot * 0.6);
  for (size_t i = 0; i < bars.size(); ++i) {
    const double x = kLeft + slot * (i + 0.5) - w / 2;
    double acc = 0;
    for (size_t k = 0; k < bars[i].values.size() && k < series.size(); ++k) {
      const double v = std::max(0.0, bars[i].values[k]) / div;
      if (v <= 0) continue;
      const double top = a.to_px_y(acc + v), bottom = a.to_px_y(acc);
      s += "<rect x=\"" + num(x) + "\" y=\"" + num(top) + "\" width=\"" + num(w) + "\" height=\"" +
           num(std::max(0.0, bottom - top)) + "\" fill=\"" + colors[k % colors.size()] + "\"><title>" +
           html_escape(bars[i].label + ": " + series[k] + " " + fmt(v, 4) + " " + unit) + "</title></rect>\n";
      acc += v;
    }
    // Labels wider than their slot are slanted so neighbours do not run into each other.
    const double cx = kLeft + slot * (i + 0.5);
    if (bars[i].label.size() * 7.0 > slot * 0.95)
      s += "<text x=\"" + num(cx) + "\" y=\"" + std::to_string(y0 + 14) + "\" text-anchor=\"end\" transform=\"rotate(-25 " +
           num(cx) + " " + std::to_string(y0 + 14) + ")\">" + html_escape(bars[i].label) + "</text>\n";
    else
      s += "<text x=\"" + num(cx) + "\" y=\"" + std::to_string(y0 + 18) + "\" text-anchor=\"middle\">" +
           html_escape(bars[i].label) + "</text>\n";
    s += "<text x=\"" + num(kLeft + slot * (i + 0.5)) + "\" y=\"" + num(a.to_px_y(acc) - 5) +
         "\" text-anchor=\"middle\" font-size=\"11\">" + html_escape(fmt(acc, 4)) + "</text>\n";
  }
  // Legend: only series with any time.
  int row = 0;
  for (size_t k = 0; k < series.size(); ++k) {
    bool any = false;
    for (const auto& b : bars) any = any || (k < b.values.size() && b.values[k] > 0);
    if (!any) continue;
    const int y = kTop + 4 + row++ * 18;
    s += "<rect x=\"" + std::to_string(kWidth - kRight + 20) + "\" y=\"" + std::to_string(y) +
         "\" width=\"12\" height=\"12\" fill=\"" + colors[k % colors.size()] + "\"/>\n";
    s += "<text x=\"" + std::to_string(kWidth - kRight + 38) + "\" y=\"" + std::to_string(y + 10) + "\">" +
         html_escape(series[k]) + "</text>\n";
  }
  return s + "</svg>\n";
}

std::string line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                       const std::vector<Point2>& pts, double ref_x, double ref_y, bool y_is_time) {
  std::string s = header(title);
  double xlo = 1e300, xhi = -1e300, ymax = 0;
  for (const auto& p : pts) xlo = std::min(xlo, p.x), xhi = std::max(xhi, p.x), ymax = std::max(ymax, p.y);
  if (!std::isnan(ref_y)) ymax = std::max(ymax, ref_y);
  if (pts.empty()) xlo = 0, xhi = 1;
  double div = 1;
  std::string unit;
  if (y_is_time) time_unit(ymax, div, unit);
  const Axis ay = y_axis(s, ymax / div * 1.05, y_is_time ? y_label + " (" + unit + ")" : y_label);
  const Axis ax = x_axis(s, xlo, xhi, x_label);
  if (!std::isnan(ref_y)) {
    const double y = ay.to_px_y(ref_y / div);
    s += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) + "\" y1=\"" +
         num(y) + "\" y2=\"" + num(y) + "\" stroke=\"#e15759\" stroke-dasharray=\"6 4\"/>\n";
    s += "<text x=\"" + std::to_string(kWidth - kRight + 6) + "\" y=\"" + num(y + 4) +
         "\" fill=\"#e15759\">baseline</text>\n";
  }
  if (!std::isnan(ref_x) && ref_x >= ax.lo && ref_x <= ax.hi) {
    const double x = ax.to_px_x(ref_x);
    s += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"" + std::to_string(kTop) + "\" y2=\"" +
         std::to_string(kHeight - kBottom) + "\" stroke=\"#999\" stroke-dasharray=\"3 3\"/>\n";
  }
  std::string poly;
  for (const auto& p : pts) poly += num(ax.to_px_x(p.x)) + "," + num(ay.to_px_y(p.y / div)) + " ";
  s += "<polyline points=\"" + poly + "\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"2\"/>\n";
  for (const auto& p : pts) {
    const double cx = ax.to_px_x(p.x), cy = ay.to_px_y(p.y / div);
    s += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"3.5\" fill=\"#4e79a7\"><title>" +
         html_escape(fmt(p.x) + ": " + fmt(p.y / div, 4) + (unit.empty() ? "" : " " + unit)) + "</title></circle>\n";
    if (!p.label.empty())
      s += "<text x=\"" + num(cx + 6) + "\" y=\"" + num(cy - 6) + "\" font-size=\"11\">" + html_escape(p.label) +
           "</text>\n";
  }
  return s + "</svg>\n";
}

std::string scatter_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                          const std::vector<Point2>& pts) {
  std::string s = header(title);
  double max = 1;
  for (const auto& p : pts) max = std::max({max, p.x, p.y});
  max *= 1.1;
  const Axis ay = y_axis(s, max, y_label);
  const Axis ax = x_axis(s, 0, ay.hi, x_label);
  const double d = std::min(ax.hi, ay.hi);
  s += "<line x1=\"" + num(ax.to_px_x(0)) + "\" y1=\"" + num(ay.to_px_y(0)) + "\" x2=\"" + num(ax.to_px_x(d)) +
       "\" y2=\"" + num(ay.to_px_y(d)) + "\" stroke=\"#999\" stroke-dasharray=\"6 4\"/>\n";
  s += "<text x=\"" + num(ax.to_px_x(d) + 4) + "\" y=\"" + num(ay.to_px_y(d) + 12) +
       "\" fill=\"#777\">speedup = peak ratio</text>\n";
  for (size_t i = 0; i < pts.size(); ++i) {
    const auto& p = pts[i];
    const double x = ax.to_px_x(p.x), y = ay.to_px_y(p.y);
    s += "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"5\" fill=\"" + palette_color(i) + "\"><title>" +
         html_escape(p.label + ": speedup " + fmt(p.y, 3) + ", peak ratio " + fmt(p.x, 3)) + "</title></circle>\n";
    s += "<text x=\"" + num(x + 7) + "\" y=\"" + num(y - 6) + "\">" + html_escape(p.label) + "</text>\n";
  }
  return s + "</svg>\n";
}

}  // namespace kcast::report
