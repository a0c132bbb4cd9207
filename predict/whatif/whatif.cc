#include "predict/whatif/whatif.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "model/error.h"

namespace kcast {

std::vector<double> SweepSpec::values() const {
  std::vector<double> v;
  for (int i = 0; i < steps; ++i) v.push_back(steps == 1 ? start : start + (stop - start) * i / (steps - 1));
  return v;
}

namespace {

double parse_number(const std::string& s, const std::string& option, const char* what) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    throw InputError("option '" + option + "': " + what + " '" + s + "' is not a number");
  return v;
}

}  // namespace

SweepSpec parse_sweep(const std::string& text, const std::string& option) {
  const auto eq = text.find('=');
  if (eq == std::string::npos)
    throw InputError("option '" + option + "': expected KNOB=START:STOP:STEPS, got '" + text + "'");
  SweepSpec s;
  s.knob = parse_knob(text.substr(0, eq), option);
  const std::string range = text.substr(eq + 1);
  const auto c1 = range.find(':'), c2 = c1 == std::string::npos ? c1 : range.find(':', c1 + 1);
  if (c2 == std::string::npos || range.find(':', c2 + 1) != std::string::npos)
    throw InputError("option '" + option + "': expected KNOB=START:STOP:STEPS, got '" + text + "'");
  s.start = parse_number(range.substr(0, c1), option, "START");
  s.stop = parse_number(range.substr(c1 + 1, c2 - c1 - 1), option, "STOP");
  const double steps = parse_number(range.substr(c2 + 1), option, "STEPS");
  if (steps < 1 || steps > 10000 || steps != std::floor(steps))
    throw InputError("option '" + option + "': STEPS must be a whole number from 1 to 10000");
  s.steps = int(steps);
  return s;
}

GpuCaps apply_changes(GpuCaps caps, const std::vector<KnobChange>& changes) {
  for (const auto& c : changes) {
    if (c.scale) scale_knob(caps, c.knob, c.value, "--scale");
    else set_knob(caps, c.knob, c.value, "--set");
  }
  return caps;
}

namespace {

// The walls study on the configured GPU: each wall's change applied to the kernels it holds back,
// and the interconnect walls where the workload has collectives.
void run_walls(const PreparedWorkload& w, WhatifResult& r) {
  const GpuCaps& base = r.modified_caps;
  const std::vector<KernelPrediction> p0 = predict_unique(w, base);
  GpuCaps compute = base, memory = base, both = base, launch = base, small = base;
  scale_compute(compute, 2);
  scale_bandwidth(memory, 2);
  scale_compute(both, 2);
  scale_bandwidth(both, 2);
  launch.launch_floor_us /= 2;
  // The small-kernel wall: both fixed costs a kernel pays whatever its work, the launch floor and
  // the memory latency (halving the latency alone leaves latency-bound kernels at the floor).
  small.launch_floor_us /= 2;
  small.mem_latency_us /= 2;
  r.walls = {{"compute_2x", "2x tensor and SIMT FLOP/s for compute-bound kernels only", {}},
             {"memory_2x", "2x DRAM and L2 bandwidth for memory- and latency-bound kernels only", {}},
             {"compute_and_memory_2x", "2x FLOP/s and bandwidth for every kernel", {}},
             {"launch_half", "launch overhead halved", {}},
             {"small_kernels_half", "launch overhead and memory latency halved (small kernels' fixed costs)", {}}};
  const GpuCaps* wall_caps[] = {&compute, &memory, &both, &launch, &small};
  parallel_for(r.walls.size(), w.opt.max_threads, [&](size_t i) {
    const GpuCaps& caps = *wall_caps[i];
    std::vector<KernelPrediction> p = predict_unique(w, caps);
    // The first two walls help only the kernels up against them: others keep their baseline time.
    // A latency-bound kernel is a memory one whose bytes take less than its latency: 2x bandwidth
    // still halves that part.
    auto against = [i](Bound b) { return i == 0 ? b == Bound::compute : b == Bound::memory || b == Bound::latency; };
    if (i < 2)
      for (size_t u = 0; u < p.size(); ++u)
        if (!against(p0[u].bound)) p[u] = p0[u];
    // The configured GPU for the first three; the halved launch floor (and latency) for the last two.
    r.walls[i].pred = evaluate_target(w, r.gpu, i >= 3 ? caps : base, p);
  });
  // A workload with collectives on a GPU with a link figure: the interconnect wall too (only
  // collectives read the link, so the others keep their baseline time by construction).
  const bool collectives = std::any_of(w.kernels.begin(), w.kernels.end(),
                                       [](const Kernel& k) { return k.cls == KernelClass::communication; });
  if (collectives && base.link_gbps > 0) {
    GpuCaps link = base;
    link.link_gbps *= 2;
    link.net_gbps *= 2;  // and between nodes (0 stays 0: no network figure)
    r.walls.push_back({"link_2x", "2x GPU-to-GPU link bandwidth (collectives; within and between nodes)", {}});
    r.walls.back().pred = evaluate_target(w, r.gpu, base, predict_unique(w, link));
    // Collectives crossing nodes on a GPU with a network figure: the NICs alone, to tell them
    // from the GPU's own links.
    if (w.network_rows > 0 && base.net_gbps > 0) {
      GpuCaps net = base;
      net.net_gbps *= 2;
      r.walls.push_back({"net_2x", "2x network bandwidth between nodes only (collectives spanning nodes)", {}});
      r.walls.back().pred = evaluate_target(w, r.gpu, base, predict_unique(w, net));
    }
  }
  // A trace with a timeline: the host wall, the time between kernels (launch gaps, host work,
  // synchronization) halved, the GPU unchanged. A step that is mostly idle GPU is held by it.
  if (w.has_timeline()) {
    r.walls.push_back({"host_half", "time between kernels halved (launch gaps, host work, synchronization)", {}});
    r.walls.back().pred = evaluate_target(w, r.gpu, base, p0, 0.5);
  }
}
}  // namespace

WhatifResult run_whatif(const PreparedWorkload& w, const GpuSpec& spec, const GpuCaps& baseline,
                        const WhatifSpec& ws) {
  WhatifResult r;
  r.gpu = spec.name;
  r.baseline_caps = baseline;
  r.modified_caps = apply_changes(baseline, ws.changes);
  std::vector<double> sweep_values;
  if (ws.sweep) {
    sweep_values = ws.sweep->values();
    // Validate every point before spending time on any.
    for (double v : sweep_values) {
      GpuCaps c = r.modified_caps;
      set_knob(c, ws.sweep->knob, v, "--sweep");
    }
  }

  // Every evaluation is independent: baseline, modified, sweep points, walls; run them in parallel.
  struct Job {
    GpuCaps caps;
    GpuPrediction* out;
  };
  std::vector<Job> jobs;
  jobs.push_back({r.baseline_caps, &r.baseline});
  jobs.push_back({r.modified_caps, &r.modified});
  r.sweep.resize(sweep_values.size());
  for (size_t i = 0; i < sweep_values.size(); ++i) {
    GpuCaps c = r.modified_caps;
    set_knob(c, ws.sweep->knob, sweep_values[i], "--sweep");
    r.sweep[i].value = sweep_values[i];
    jobs.push_back({c, &r.sweep[i].pred});
  }
  parallel_for(jobs.size(), w.opt.max_threads, [&](size_t i) {
    *jobs[i].out = evaluate_target(w, r.gpu, jobs[i].caps, predict_unique(w, jobs[i].caps));
  });

  if (ws.walls) run_walls(w, r);
  return r;
}

}  // namespace kcast
