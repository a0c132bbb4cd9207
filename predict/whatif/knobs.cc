#include "predict/whatif/knobs.h"

#include <charconv>
#include <cmath>

#include "model/error.h"

namespace kcast {

const std::vector<KnobInfo> kKnobs = {
    {Knob::dram_bw, "dram_bw", "GB/s"},           {Knob::l2_bw, "l2_bw", "GB/s"},
    {Knob::l2_size, "l2_size", "MB"},             {Knob::tensor_flops, "tensor_flops", "TFLOP/s"},
    {Knob::vector_flops, "vector_flops", "TFLOP/s"}, {Knob::sm_count, "sm_count", "SMs"},
    {Knob::clock, "clock", "MHz"},                {Knob::launch_overhead, "launch_overhead", "us"},
    {Knob::link_bw, "link_bw", "GB/s"},           {Knob::mem_latency, "mem_latency", "us"},
    {Knob::net_bw, "net_bw", "GB/s"}};

std::string_view to_string(Knob k) {
  for (const auto& i : kKnobs)
    if (i.knob == k) return i.name;
  return "?";
}

std::string_view knob_unit(Knob k) {
  for (const auto& i : kKnobs)
    if (i.knob == k) return i.unit;
  return "";
}

Knob parse_knob(std::string_view name, const std::string& option) {
  for (const auto& i : kKnobs)
    if (name == i.name) return i.knob;
  std::string list;
  for (const auto& i : kKnobs) list += (list.empty() ? "" : ", ") + std::string(i.name);
  throw InputError("option '" + option + "': unknown knob '" + std::string(name) + "' (knobs: " + list + ")");
}

namespace {

// GEMMs of dtype i run on tensor cores: the caps say so, including FP8 and FP4 where the GPU has no
// such units and weight-only kernels multiply on its 16-bit ones (GpuCaps::simt_gemm).
bool is_tensor(const GpuCaps& c, int i) { return !c.simt_gemm[i]; }

// The dtype whose rate stands for "tensor_flops": BF16, else FP16, else any tensor dtype; -1: none.
int tensor_reference(const GpuCaps& caps) {
  for (DType d : {DType::bf16, DType::fp16, DType::tf32, DType::fp8, DType::int8, DType::fp4})
    if (is_tensor(caps, int(d)) && caps.tensor_tflops[int(d)] > 0) return int(d);
  return -1;
}

void scale_tensor(GpuCaps& c, double f) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (is_tensor(c, i)) c.tensor_tflops[i] *= f;
}

void scale_simt(GpuCaps& c, double f) {
  c.vector_tflops *= f;
  for (int i = 0; i < kNumDTypes; ++i)
    if (!is_tensor(c, i)) c.tensor_tflops[i] *= f;
}

void require_positive(double v, Knob k, const std::string& option) {
  if (!(v > 0) || !std::isfinite(v))
    throw InputError("option '" + option + "': " + std::string(to_string(k)) + " must be a positive number");
}

}  // namespace

void scale_compute(GpuCaps& c, double f) {
  c.vector_tflops *= f;
  for (double& r : c.tensor_tflops) r *= f;
}

void scale_bandwidth(GpuCaps& c, double f) {
  c.dram_bw_gbps *= f;
  c.l2_bw_gbps *= f;
}

double knob_value(const GpuCaps& c, Knob k) {
  switch (k) {
    case Knob::dram_bw: return c.dram_bw_gbps;
    case Knob::l2_bw: return c.l2_bw_gbps;
    case Knob::l2_size: return c.l2_bytes / 1e6;
    case Knob::tensor_flops: {
      const int ref = tensor_reference(c);
      return ref < 0 ? 0.0 : c.tensor_tflops[ref];
    }
    case Knob::vector_flops: return c.vector_tflops;
    case Knob::sm_count: return c.sm_count;
    case Knob::clock: return c.clock_mhz;
    case Knob::launch_overhead: return c.launch_floor_us;
    case Knob::link_bw: return c.link_gbps;
    case Knob::mem_latency: return c.mem_latency_us;
    case Knob::net_bw: return c.net_gbps;
  }
  return 0;
}

void set_knob(GpuCaps& c, Knob k, double v, const std::string& option) {
  if (k == Knob::tensor_flops && tensor_reference(c) < 0)
    throw InputError("option '" + option + "': " + c.name + " has no tensor cores; use vector_flops");
  if (k == Knob::link_bw && !(c.link_gbps > 0))
    throw InputError("option '" + option + "': " + c.name + " has no link_gbps in the GPU database");
  if (k == Knob::net_bw && !(c.net_gbps > 0))
    throw InputError("option '" + option + "': " + c.name + " has no net_gbps in the GPU database");
  // l2_size, launch_overhead and mem_latency may be zero (no L2, no launch cost, no latency); the
  // rest must be positive.
  if (k == Knob::l2_size || k == Knob::launch_overhead || k == Knob::mem_latency) {
    if (!(v >= 0) || !std::isfinite(v))
      throw InputError("option '" + option + "': " + std::string(to_string(k)) + " must not be negative");
  } else {
    require_positive(v, k, option);
  }
  switch (k) {
    case Knob::dram_bw: c.dram_bw_gbps = v; return;
    case Knob::l2_bw: c.l2_bw_gbps = v; return;
    case Knob::l2_size: c.l2_bytes = v * 1e6; return;
    case Knob::tensor_flops: {
      const int ref = tensor_reference(c);
      scale_tensor(c, v / c.tensor_tflops[ref]);
      return;
    }
    case Knob::vector_flops: scale_simt(c, v / c.vector_tflops); return;
    case Knob::sm_count: {
      const int n = int(std::lround(v));
      if (n < 1) throw InputError("option '" + option + "': sm_count must be at least 1");
      scale_compute(c, double(n) / c.sm_count);
      c.sm_count = n;
      // Wave quantization: the GEMM tiles' resident slots are derived from the SM count.
      c.set_tile_slots();
      return;
    }
    case Knob::clock: {
      const double f = v / c.clock_mhz;
      scale_compute(c, f);
      c.l2_bw_gbps *= f;
      c.mem_latency_us /= f;
      c.stream_latency_us /= f;  // a round trip in cycles, as mem_latency
      c.clock_mhz = v;
      return;
    }
    case Knob::launch_overhead: c.launch_floor_us = v; return;
    case Knob::link_bw: c.link_gbps = v; return;
    case Knob::mem_latency:
      // The same DRAM round trip bounds the kernels whose threads keep one element in flight
      // (GpuCaps::stream_latency_us): it moves in proportion.
      if (c.mem_latency_us > 0) c.stream_latency_us *= v / c.mem_latency_us;
      c.mem_latency_us = v;
      return;
    case Knob::net_bw: c.net_gbps = v; return;
  }
}

void scale_knob(GpuCaps& c, Knob k, double f, const std::string& option) {
  if (!(f > 0) || !std::isfinite(f))
    throw InputError("option '" + option + "': the factor for " + std::string(to_string(k)) + " must be positive");
  set_knob(c, k, knob_value(c, k) * f, option);
}

std::pair<Knob, double> parse_knob_assignment(const std::string& text, const std::string& option) {
  const auto eq = text.find('=');
  if (eq == std::string::npos)
    throw InputError("option '" + option + "': expected KNOB=NUMBER, got '" + text + "'");
  const Knob k = parse_knob(text.substr(0, eq), option);
  const std::string num = text.substr(eq + 1);
  double v = 0;
  auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (num.empty() || ec != std::errc() || end != num.data() + num.size())
    throw InputError("option '" + option + "': '" + num + "' is not a number");
  return {k, v};
}

}  // namespace kcast
