// Table, CSV and JSON renderers of WhatifValues (whatif_values.h).
#include <cstdio>

#include "predict/report/text_util.h"
#include "predict/report/whatif_values.h"

namespace kcast {

using report::csv_cell;
using report::fixed;
using report::fmt;
using report::human_time;

void render_whatif_table(const WhatifValues& v, std::ostream& o) {
  char line[512];
  o << "kcast whatif: " << v.kernels_file << " (" << v.kernels << " rows) on " << v.gpu << ", mode " << v.mode
    << ", model " << v.model << "\n\n";
  std::snprintf(line, sizeof line, "%-16s %12s %12s  %s\n", "knob", "baseline", "modified", "unit");
  o << line;
  for (const auto& c : v.changes) {
    std::snprintf(line, sizeof line, "%-16s %12s %12s  %s%s\n", c.knob.c_str(), fmt(c.baseline, 6).c_str(),
                  fmt(c.modified, 6).c_str(), c.unit.c_str(), c.baseline != c.modified ? "  *" : "");
    o << line;
  }
  o << "\nstep time: baseline " << human_time(v.baseline_us) << ", modified " << human_time(v.modified_us)
    << ", speedup " << fixed(v.speedup, 3) << "x\n";
  o << "kernel time: baseline " << human_time(v.baseline_kernel_us) << ", modified "
    << human_time(v.modified_kernel_us) << "\n\n";
  std::snprintf(line, sizeof line, "%-14s %7s %14s %14s %8s\n", "class", "rows", "baseline_us", "modified_us",
                "speedup");
  o << line;
  for (KernelClass c : kAllClasses) {
    const int i = int(c);
    if (!v.class_rows[i]) continue;
    std::snprintf(line, sizeof line, "%-14s %7zu %14s %14s %8s\n", std::string(to_string(c)).c_str(), v.class_rows[i],
                  fmt(v.class_baseline[i]).c_str(), fmt(v.class_modified[i]).c_str(),
                  fixed(v.class_modified[i] > 0 ? v.class_baseline[i] / v.class_modified[i] : kUnknown, 3).c_str());
    o << line;
  }
  o << "bound share (baseline -> modified):";
  for (Bound b : kAllBounds)
    o << "  " << to_string(b) << " "
      << fixed(v.baseline_kernel_us > 0 ? 100 * v.bound_baseline[int(b)] / v.baseline_kernel_us : kUnknown, 1)
      << "% -> "
      << fixed(v.modified_kernel_us > 0 ? 100 * v.bound_modified[int(b)] / v.modified_kernel_us : kUnknown, 1)
      << "%";
  o << "\n";
  if (v.has_sweep) {
    o << "\nsweep of " << v.sweep_knob << " (" << v.sweep_unit << "; baseline " << fmt(v.sweep_knob_baseline)
      << "):\n";
    std::snprintf(line, sizeof line, "%14s %14s %8s\n", "value", "total_us", "speedup");
    o << line;
    for (const auto& p : v.sweep) {
      std::snprintf(line, sizeof line, "%14s %14s %8s\n", fmt(p.value).c_str(), fmt(p.total_us).c_str(),
                    fixed(p.speedup, 3).c_str());
      o << line;
    }
  }
  if (!v.walls.empty()) {
    o << "\nwalls (speedup over the " << (v.speedup != 1 ? "modified" : "baseline") << " GPU):\n";
    for (const auto& w : v.walls) {
      std::snprintf(line, sizeof line, "  %-22s %8sx  %s\n", w.name.c_str(), fixed(w.speedup, 3).c_str(),
                    w.description.c_str());
      o << line;
    }
  }
}

void render_whatif_csv(const WhatifValues& v, std::ostream& o) {
  // One long table: section,name,baseline,modified,speedup (sections: total, class, sweep, wall, knob).
  o << "section,name,baseline,modified,speedup\n";
  o << "total,step_us," << fmt(v.baseline_us, 10) << ',' << fmt(v.modified_us, 10) << ',' << fmt(v.speedup) << "\n";
  o << "total,kernel_us," << fmt(v.baseline_kernel_us, 10) << ',' << fmt(v.modified_kernel_us, 10) << ','
    << fmt(v.modified_kernel_us > 0 ? v.baseline_kernel_us / v.modified_kernel_us : kUnknown) << "\n";
  for (const auto& c : v.changes)
    o << "knob," << c.knob << ',' << fmt(c.baseline, 10) << ',' << fmt(c.modified, 10) << ",\n";
  for (KernelClass c : kAllClasses) {
    const int i = int(c);
    if (!v.class_rows[i]) continue;
    o << "class," << to_string(c) << ',' << fmt(v.class_baseline[i], 10) << ',' << fmt(v.class_modified[i], 10)
      << ',' << fmt(v.class_modified[i] > 0 ? v.class_baseline[i] / v.class_modified[i] : kUnknown) << "\n";
  }
  for (const auto& p : v.sweep)
    o << "sweep," << csv_cell(v.sweep_knob + "=" + fmt(p.value, 10)) << ',' << fmt(v.baseline_us, 10) << ','
      << fmt(p.total_us, 10) << ',' << fmt(p.speedup) << "\n";
  for (const auto& w : v.walls)
    o << "wall," << w.name << ',' << fmt(v.modified_us, 10) << ',' << fmt(w.total_us, 10) << ','
      << fmt(w.speedup) << "\n";
}

nlohmann::json whatif_json(const WhatifValues& v) {
  using nlohmann::json;
  auto num = [](double x) { return known(x) ? json(x) : json(); };
  json j;
  j["gpu"] = v.gpu;
  if (v.has_sweep) {
    j["knob"] = v.sweep_knob;
    j["baseline_us"] = v.baseline_us;
    json pts = json::array();
    for (const auto& p : v.sweep) pts.push_back({{"value", p.value}, {"total_us", p.total_us}, {"speedup", num(p.speedup)}});
    j["sweep"] = pts;
    j["unit"] = v.sweep_unit;
    j["knob_baseline"] = num(v.sweep_knob_baseline);
    j["modified_us"] = v.modified_us;  // the GPU the sweep starts from (baseline plus --set/--scale)
  } else {
    j["baseline_us"] = v.baseline_us;
    j["modified_us"] = v.modified_us;
    j["speedup"] = num(v.speedup);
    json by_class = json::object();
    for (KernelClass c : kAllClasses)
      if (v.class_rows[int(c)])
        by_class[std::string(to_string(c))] = {{"baseline_us", v.class_baseline[int(c)]},
                                               {"modified_us", v.class_modified[int(c)]}};
    j["by_class"] = by_class;
    json by_bound = json::object();
    for (Bound b : kAllBounds)
      by_bound[std::string(to_string(b))] = {{"baseline_us", v.bound_baseline[int(b)]},
                                             {"modified_us", v.bound_modified[int(b)]}};
    j["by_bound"] = by_bound;
    j["kernel_us"] = {{"baseline_us", v.baseline_kernel_us}, {"modified_us", v.modified_kernel_us}};
  }
  j["mode"] = v.mode;
  json knobs = json::object();
  for (const auto& c : v.changes) knobs[c.knob] = {{"baseline", c.baseline}, {"modified", c.modified}, {"unit", c.unit}};
  j["knobs"] = knobs;
  if (!v.walls.empty()) {
    json walls = json::array();
    for (const auto& w : v.walls)
      walls.push_back({{"name", w.name}, {"description", w.description}, {"total_us", w.total_us},
                       {"speedup", num(w.speedup)}});
    j["walls"] = walls;
  }
  return j;
}

}  // namespace kcast
