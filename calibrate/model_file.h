// model.json: a fitted cost model plus the per-GPU measured capabilities (from microbenchmarks) that
// override datasheet-derived defaults, with provenance and fit error. Versioned; written atomically.
//
// {"format":"kcast-model","version":1,"kcast_version":"0.1.0",
//  "params":{"floor_us":2.1,...}, "context_overhead_us":{"neusight":18.0,...},
//  "context_a_pass_bytes":{"aiconfigurator:fp8":5},   (optional; ModelParams::context_a_pass_bytes)
//  "gpus":{"A100-SXM4-80GB":{"dram_bw_gbps":1760,"l2_bw_gbps":5400,"launch_us":2.6,
//          "fp32_tflops":19.2,"gemm_eff":{"bf16":0.869},"source":"..."}},
//  "provenance":{"inputs":[{"file":...,"sha256"/"fnv1a64":...,"rows":N}],"created":...},
//  "fit":{"per_class_gpu":[{"gpu":...,"class":...,"rows":N,"median_err":...,"p90_err":...}]}}
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "model/cost_model.h"
#include "model/gpu_database.h"

namespace kcast {

struct GpuMeasured {
  double dram_bw_gbps = kUnknown, l2_bw_gbps = kUnknown, launch_us = kUnknown, fp32_tflops = kUnknown;
  double stream_latency_us = kUnknown;
  PerDType<double> gemm_eff = per_dtype(kUnknown);
  double sgemm_scale = kUnknown;    // fitted from the board's SIMT GEMMs and convolutions (calibrate/fit.h)
  double conv_scale = kUnknown;     // instead, on a board measured on convolutions alone
  double context_scale = kUnknown;  // its measurement rig's context floors, fitted likewise
  std::string source;
};

struct LoadedModel {
  CostModel model;
  std::map<std::string, GpuMeasured> gpus;  // canonical GPU name -> measured overrides
  nlohmann::json provenance = nlohmann::json::object();
  nlohmann::json fit = nlohmann::json::object();
  std::string path;  // where it was loaded from ("<default>" for the shipped one)

  // The GPU's spec with this model's measured overrides applied; with `siblings`, figures the GPU
  // lacks are taken from its chip siblings' (DRAM bandwidth, SGEMM and convolution scales; DRAM
  // bandwidth without a sibling from its vendor's measured boards).
  GpuSpec spec_for(const GpuSpec& gpu, bool siblings = true) const;
  // Where spec_for's sustained DRAM bandwidth comes from, in words (`kcast gpus`).
  std::string dram_bw_from(const GpuSpec& gpu) const;
  GpuCaps caps_for(const GpuSpec& gpu) const { return model.caps(spec_for(gpu)); }
};

// The architecture facts table (data/archs.csv), loaded once.
const std::vector<ArchFacts>& default_arch_facts();
std::vector<ArchFacts> parse_arch_facts(const std::string& text, const std::string& file);

LoadedModel model_from_json(const nlohmann::json& j, const std::string& file);
nlohmann::json model_to_json(const LoadedModel& m);
LoadedModel load_model(const std::string& path);  // InputError naming the file on bad content
void save_model(const LoadedModel& m, const std::string& path);  // atomic
// data/models/default.json when shipped, else the initial parameters with no GPU overrides.
const LoadedModel& default_model();
// --model PATH if given, else default_model().
LoadedModel model_or_default(const std::string& path);

}  // namespace kcast
