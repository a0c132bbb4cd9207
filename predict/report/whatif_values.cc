#include "predict/report/whatif_values.h"

namespace kcast {

WhatifValues make_whatif_values(const WhatifResult& r, const WhatifSpec& ws,
                                const std::string& kernels_file, const std::string& model) {
  WhatifValues v;
  v.gpu = r.gpu;
  v.mode = std::string(to_string(r.baseline.mode));
  v.kernels_file = kernels_file;
  v.model = model;
  v.kernels = r.baseline.rows;
  for (const auto& k : kKnobs)
    v.changes.push_back({k.name, k.unit, knob_value(r.baseline_caps, k.knob),
                         knob_value(r.modified_caps, k.knob)});
  v.baseline_us = r.baseline.step_us;
  v.modified_us = r.modified.step_us;
  v.speedup = v.modified_us > 0 ? v.baseline_us / v.modified_us : kUnknown;
  v.baseline_kernel_us = r.baseline.kernel_us;
  v.modified_kernel_us = r.modified.kernel_us;
  v.class_rows = r.baseline.class_rows;
  for (KernelClass c : kAllClasses) {
    v.class_baseline[int(c)] = r.baseline.by_class(c);
    v.class_modified[int(c)] = r.modified.by_class(c);
  }
  for (Bound b : kAllBounds) {
    v.bound_baseline[int(b)] = r.baseline.by_bound(b);
    v.bound_modified[int(b)] = r.modified.by_bound(b);
  }
  if (ws.sweep) {
    v.has_sweep = true;
    v.sweep_knob = std::string(to_string(ws.sweep->knob));
    v.sweep_unit = std::string(knob_unit(ws.sweep->knob));
    v.sweep_knob_baseline = knob_value(r.baseline_caps, ws.sweep->knob);
    for (const auto& p : r.sweep)
      v.sweep.push_back({p.value, p.pred.step_us, p.pred.step_us > 0 ? v.baseline_us / p.pred.step_us : kUnknown});
  }
  for (const auto& w : r.walls)
    v.walls.push_back({w.name, w.description, w.pred.step_us,
                       w.pred.step_us > 0 ? v.modified_us / w.pred.step_us : kUnknown});
  return v;
}

}  // namespace kcast
