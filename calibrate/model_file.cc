#include "calibrate/model_file.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "io/atomic_file.h"
#include "io/csv_source.h"
#include "io/embedded_data.h"
#include "io/gpu_database_csv.h"
#include "io/json_input.h"
#include "calibrate/median.h"
#include "model/error.h"

namespace kcast {

namespace {

// "256x128;128x128": a tile menu cell. Empty is allowed here; the caller decides if it may be.
std::vector<GemmTile> parse_tiles(const char* cell, const CellRef& where) {
  std::vector<GemmTile> tiles;
  std::stringstream ts(cell ? cell : "");
  for (std::string t; std::getline(ts, t, ';');) {
    int m = 0, n = 0;
    char x = 0;
    std::stringstream one(t);
    if (!(one >> m >> x >> n) || x != 'x' || m <= 0 || n <= 0)
      throw InputError(where.where() + ": bad tile '" + t + "' (want MxN)");
    tiles.push_back({m, n});
  }
  return tiles;
}

// "volta;turing" -> the families' bits (ArchFacts::sgemm_families); empty = none.
uint32_t parse_sgemm_families(const char* cell, const CellRef& where) {
  uint32_t bits = 0;
  std::stringstream ts(cell ? cell : "");
  for (std::string f; std::getline(ts, f, ';');) {
    const SgemmFamily fam = sgemm_family_named(f);
    if (fam == SgemmFamily::none)
      throw InputError(where.where() + ": unknown SGEMM kernel family '" + f + "' (maxwell, volta, turing, ampere)");
    bits |= 1u << unsigned(fam);
  }
  return bits;
}

}  // namespace

std::vector<ArchFacts> parse_arch_facts(const std::string& text, const std::string& file) {
  std::vector<ArchFacts> out;
  try {
    io::CSVReader<15, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>> in(
        file, std::make_unique<MemoryByteSource>(text));
    in.read_header(io::ignore_extra_column | io::ignore_missing_column, "compute_capability",
                   "fp32_gemm_factor", "ctas_per_sm", "split_k", "max_split_k", "tiles", "stream_k", "simt_tiles",
                   "simt_batched_tile", "sgemm_families", "simt_long_k", "watts_per_sm_ghz", "mma_sync_fraction",
                   "threads_per_sm", "narrow_power_factor");
    // With ignore_missing_column, fccp leaves a missing column's pointer untouched: start null.
    char *cc = nullptr, *f32 = nullptr, *ctas = nullptr, *split = nullptr, *maxsplit = nullptr,
         *tiles = nullptr, *streamk = nullptr, *simt = nullptr, *batched = nullptr, *families = nullptr,
         *longk = nullptr, *watts = nullptr, *mma = nullptr, *threads = nullptr, *narrow = nullptr;
    while (in.read_row(cc, f32, ctas, split, maxsplit, tiles, streamk, simt, batched, families, longk, watts, mma,
                       threads, narrow)) {
      const unsigned line = in.get_file_line();
      ArchFacts a;
      a.compute_capability = cc ? cc : "";
      parse_double_cell(f32, CellRef{file, line, "fp32_gemm_factor"}, a.fp32_gemm_factor);
      // An architecture's own power figure: positive, or empty for the fitted one (0).
      auto positive_or_empty = [&](const char* cell, const char* column, double& out) {
        if (parse_double_cell(cell, CellRef{file, line, column}, out) && !(out > 0))
          throw InputError(CellRef{file, line, column}.where() + ": must be > 0 (or empty)");
      };
      positive_or_empty(watts, "watts_per_sm_ghz", a.watts_per_sm_ghz);
      positive_or_empty(narrow, "narrow_power_factor", a.narrow_power_factor);
      if (parse_double_cell(mma, CellRef{file, line, "mma_sync_fraction"}, a.mma_sync_fraction) &&
          !(a.mma_sync_fraction > 0 && a.mma_sync_fraction <= 1))
        throw InputError(CellRef{file, line, "mma_sync_fraction"}.where() + ": must be in (0, 1] (or empty)");
      int64_t v = 0;
      if (parse_int_cell(ctas, CellRef{file, line, "ctas_per_sm"}, v)) a.ctas_per_sm = int(std::max<int64_t>(1, v));
      if (parse_int_cell(split, CellRef{file, line, "split_k"}, v)) a.split_k = v != 0;
      if (parse_int_cell(maxsplit, CellRef{file, line, "max_split_k"}, v)) a.max_split_k = int(std::max<int64_t>(1, v));
      if (parse_int_cell(streamk, CellRef{file, line, "stream_k"}, v)) a.stream_k = v != 0;
      if (parse_int_cell(threads, CellRef{file, line, "threads_per_sm"}, v)) {
        if (v < 32 || v > 65536)
          throw InputError(CellRef{file, line, "threads_per_sm"}.where() + ": must be 32..65536");
        a.threads_per_sm = int(v);
      }
      if (parse_int_cell(longk, CellRef{file, line, "simt_long_k"}, v)) a.simt_long_k = v != 0;
      a.tiles = parse_tiles(tiles, CellRef{file, line, "tiles"});
      if (a.tiles.empty()) throw InputError(CellRef{file, line, "tiles"}.where() + ": no tiles");
      a.simt_tiles = parse_tiles(simt, CellRef{file, line, "simt_tiles"});
      const std::vector<GemmTile> one = parse_tiles(batched, CellRef{file, line, "simt_batched_tile"});
      if (one.size() > 1)
        throw InputError(CellRef{file, line, "simt_batched_tile"}.where() + ": one tile (MxN) or empty");
      if (!one.empty()) a.simt_batched = one[0];
      a.sgemm_families = parse_sgemm_families(families, CellRef{file, line, "sgemm_families"});
      out.push_back(std::move(a));
    }
  } catch (const io::error::base& e) {
    throw InputError(e.what());
  }
  return out;
}

const std::vector<ArchFacts>& default_arch_facts() {
  static const std::vector<ArchFacts> t = parse_arch_facts(data_file("archs.csv"), "data/archs.csv");
  return t;
}

namespace {

double as_measured(double figure, const GpuSpec&) { return figure; }

// The measured figure `field` of the model's other boards that `same` calls siblings of `gpu`, in
// name order, each as `of` states it relative to its own board (as measured by default).
std::vector<double> sibling_figures(const std::map<std::string, GpuMeasured>& gpus, const GpuSpec& gpu,
                                    double GpuMeasured::*field, bool (*same)(const GpuSpec&, const GpuSpec&),
                                    double (*of)(double figure, const GpuSpec& board) = as_measured) {
  std::vector<double> out;
  for (const auto& [name, m] : gpus) {
    if (!known(m.*field) || name == gpu.name) continue;
    const GpuSpec* sib = default_gpu_database().find(name);
    if (sib && same(*sib, gpu)) out.push_back(of(m.*field, *sib));
  }
  return out;
}

// Sustained DRAM bandwidth is a property of the memory system: a board without a measurement takes
// the measured figure of a sibling with the same chip generation and the same datasheet memory
// (V100 PCIe 32GB from the 16GB board, A100 PCIe 40GB from the SXM4 40GB one). Without one, the
// median fraction of datasheet bandwidth that its vendor's measured boards sustain (memory
// controllers and the stack's copy kernels are the vendor's): STREAM triad runs 0.80-0.84 of the
// datasheet on all three AMD boards measured (MI100, MI210, MI300X) and 0.86-0.95 on six of seven
// NVIDIA ones (the early-HBM3e H200 0.74), so a median across vendors would move each vendor's
// boards toward the other's. With no measured board of its vendor, mem_eff applies (GpuCaps).
struct DramFigure {
  double gbps = kUnknown;
  const char* from = "mem_eff x datasheet (median of the measured boards)";
};
DramFigure sibling_dram_bw(const std::map<std::string, GpuMeasured>& gpus, const GpuSpec& gpu) {
  if (!known(gpu.dram_bw_gbps)) return {};
  const std::vector<double> v = sibling_figures(gpus, gpu, &GpuMeasured::dram_bw_gbps, [](const GpuSpec& a, const GpuSpec& b) {
    return a.compute_capability == b.compute_capability && a.dram_bw_gbps == b.dram_bw_gbps;
  });
  if (!v.empty()) return {v.front(), "memory sibling (same compute capability and datasheet bandwidth)"};
  const std::vector<double> fractions = sibling_figures(
      gpus, gpu, &GpuMeasured::dram_bw_gbps,
      [](const GpuSpec& board, const GpuSpec& g) {
        return board.vendor == g.vendor && known(board.dram_bw_gbps) && board.dram_bw_gbps > 0;
      },
      [](double gbps, const GpuSpec& board) { return gbps / board.dram_bw_gbps; });
  if (fractions.empty()) return {};
  return {median_of(fractions) * gpu.dram_bw_gbps, "its vendor's measured boards (median fraction of datasheet)"};
}

// The SGEMM efficiency of a board is mostly its chip's (the same cuBLAS kernels on the same SMs): a
// board without measured FP32 GEMMs takes the median scale of the measured boards of its chip (same
// compute capability and SM count: V100 SXM2 from V100 PCIe, A100 SXM4 from the A100 PCIe boards).
// On square torch.mm SGEMMs timed elsewhere (data/measured/torch_mm_square.csv) the V100 SXM2 and P100
// SXM2 run 0.90-0.92 of their datasheet peak at n >= 4096, as their PCIe siblings' scales say, not the
// typical board's 0.80.
// Convolutions likewise, from the chip's boards with measured convolutions (cuDNN's kernels).
double sibling_scale(const std::map<std::string, GpuMeasured>& gpus, const GpuSpec& gpu, double GpuMeasured::*field) {
  const std::vector<double> v = sibling_figures(gpus, gpu, field, [](const GpuSpec& a, const GpuSpec& b) {
    return a.compute_capability == b.compute_capability && a.sm_count == b.sm_count;
  });
  return v.empty() ? kUnknown : median_of(v);
}

}  // namespace

GpuSpec LoadedModel::spec_for(const GpuSpec& gpu, bool siblings) const {
  GpuSpec s = gpu;
  auto it = gpus.find(gpu.name);
  if (siblings) {
    const bool own = it != gpus.end();
    if (!own || !known(it->second.dram_bw_gbps)) s.measured_dram_bw_gbps = sibling_dram_bw(gpus, gpu).gbps;
    if (!own || !known(it->second.sgemm_scale)) s.measured_sgemm_scale = sibling_scale(gpus, gpu, &GpuMeasured::sgemm_scale);
    if (!own || !known(it->second.conv_scale)) s.measured_conv_scale = sibling_scale(gpus, gpu, &GpuMeasured::conv_scale);
    // A streaming round trip is the chip's memory system: its boards' figure (H200's for the H100 SXM,
    // the 40 GB A100's for the 80 GB) before the cross-GPU default (GpuCaps::stream_latency_us).
    if (!own || !known(it->second.stream_latency_us))
      s.measured_stream_latency_us = sibling_scale(gpus, gpu, &GpuMeasured::stream_latency_us);
  }
  if (it == gpus.end()) return s;
  const GpuMeasured& m = it->second;
  if (known(m.dram_bw_gbps)) s.measured_dram_bw_gbps = m.dram_bw_gbps;
  if (known(m.l2_bw_gbps)) s.measured_l2_bw_gbps = m.l2_bw_gbps;
  if (known(m.launch_us)) s.measured_launch_us = m.launch_us;
  if (known(m.stream_latency_us)) s.measured_stream_latency_us = m.stream_latency_us;
  if (known(m.fp32_tflops)) s.measured_fp32_tflops = m.fp32_tflops;
  if (known(m.sgemm_scale)) s.measured_sgemm_scale = m.sgemm_scale;
  if (known(m.conv_scale)) s.measured_conv_scale = m.conv_scale;
  if (known(m.context_scale)) s.measured_context_scale = m.context_scale;
  for (int i = 0; i < kNumDTypes; ++i)
    if (known(m.gemm_eff[i])) s.measured_gemm_eff[i] = m.gemm_eff[i];
  if (!m.source.empty()) s.measured_source = m.source;
  return s;
}

std::string LoadedModel::dram_bw_from(const GpuSpec& gpu) const {
  auto it = gpus.find(gpu.name);
  if (it != gpus.end() && known(it->second.dram_bw_gbps)) return "own measurement";
  return sibling_dram_bw(gpus, gpu).from;
}

namespace {

double num_or_nan(const nlohmann::json& j, const char* key, const std::string& file) {
  if (!j.contains(key) || j[key].is_null()) return kUnknown;
  if (!j[key].is_number()) throw InputError(file + ": key '" + key + "' must be a number");
  return j[key].get<double>();
}

}  // namespace

LoadedModel model_from_json(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object() || j.value("format", "") != "kcast-model")
    throw InputError(file + ": not a kcast model (expected \"format\": \"kcast-model\")");
  const int version = j.value("version", 0);
  if (version != 1) throw InputError(file + ": unsupported model version " + std::to_string(version));
  ModelParams p;
  if (j.contains("params")) {
    const auto& pj = j["params"];
    if (!pj.is_object()) throw InputError(file + ": 'params' must be an object");
    for (int i = 0; i < kNumParams; ++i) {
      double v = num_or_nan(pj, kParamInfo[i].name, file);
      if (known(v)) p.p[i] = v;
    }
  }
  if (j.contains("context_overhead_us")) {
    for (const auto& [ctx, v] : j["context_overhead_us"].items()) {
      if (!v.is_number()) throw InputError(file + ": context_overhead_us." + ctx + " must be a number");
      p.context_overhead_us[ctx] = v.get<double>();
    }
  }
  if (j.contains("context_a_pass_bytes")) {
    const auto& cj = j["context_a_pass_bytes"];
    if (!cj.is_object()) throw InputError(file + ": 'context_a_pass_bytes' must be an object");
    for (const auto& [ctx, v] : cj.items()) {
      if (!v.is_number() || !(v.get<double>() >= 0))
        throw InputError(file + ": context_a_pass_bytes." + ctx + " must be a non-negative number");
      p.context_a_pass_bytes[ctx] = v.get<double>();
    }
  }
  LoadedModel m{CostModel(p, default_arch_facts()), {}, j.value("provenance", nlohmann::json::object()),
                j.value("fit", nlohmann::json::object()), file};
  if (j.contains("gpus")) {
    for (const auto& [name, g] : j["gpus"].items()) {
      if (!g.is_object()) throw InputError(file + ": gpus." + name + " must be an object");
      GpuMeasured gm;
      gm.dram_bw_gbps = num_or_nan(g, "dram_bw_gbps", file);
      gm.l2_bw_gbps = num_or_nan(g, "l2_bw_gbps", file);
      gm.launch_us = num_or_nan(g, "launch_us", file);
      gm.stream_latency_us = num_or_nan(g, "stream_latency_us", file);
      gm.fp32_tflops = num_or_nan(g, "fp32_tflops", file);
      gm.sgemm_scale = num_or_nan(g, "sgemm_scale", file);
      gm.conv_scale = num_or_nan(g, "conv_scale", file);
      gm.context_scale = num_or_nan(g, "context_scale", file);
      if (g.contains("gemm_eff")) {
        for (const auto& [dt, v] : g["gemm_eff"].items()) {
          auto d = parse_dtype(dt);
          if (!d || !v.is_number()) throw InputError(file + ": gpus." + name + ".gemm_eff." + dt + " is invalid");
          gm.gemm_eff[int(*d)] = v.get<double>();
        }
      }
      gm.source = g.value("source", "");
      m.gpus[name] = gm;
    }
  }
  return m;
}

nlohmann::json model_to_json(const LoadedModel& m) {
  nlohmann::json j;
  j["format"] = "kcast-model";
  j["version"] = 1;
  j["kcast_version"] = KCAST_VERSION;
  nlohmann::json pj = nlohmann::json::object();
  for (int i = 0; i < kNumParams; ++i) pj[kParamInfo[i].name] = m.model.params().p[i];
  j["params"] = pj;
  j["context_overhead_us"] = m.model.params().context_overhead_us;
  if (!m.model.params().context_a_pass_bytes.empty()) j["context_a_pass_bytes"] = m.model.params().context_a_pass_bytes;
  nlohmann::json gj = nlohmann::json::object();
  for (const auto& [name, g] : m.gpus) {
    nlohmann::json o;
    auto put = [&](const char* k, double v) {
      if (known(v)) o[k] = v;
    };
    put("dram_bw_gbps", g.dram_bw_gbps);
    put("l2_bw_gbps", g.l2_bw_gbps);
    put("launch_us", g.launch_us);
    put("stream_latency_us", g.stream_latency_us);
    put("fp32_tflops", g.fp32_tflops);
    put("sgemm_scale", g.sgemm_scale);
    put("conv_scale", g.conv_scale);
    put("context_scale", g.context_scale);
    nlohmann::json eff = nlohmann::json::object();
    for (DType d : kAllDTypes)
      if (known(g.gemm_eff[int(d)])) eff[std::string(to_string(d))] = g.gemm_eff[int(d)];
    if (!eff.empty()) o["gemm_eff"] = eff;
    if (!g.source.empty()) o["source"] = g.source;
    gj[name] = o;
  }
  j["gpus"] = gj;
  j["provenance"] = m.provenance;
  j["fit"] = m.fit;
  return j;
}

LoadedModel load_model(const std::string& path) {
  const std::string text = read_file(path, kMaxDocumentBytes);
  return model_from_json(parse_json_input(text, path), path);
}

void save_model(const LoadedModel& m, const std::string& path) {
  const std::string text = model_to_json(m).dump(1) + "\n";
  write_file_atomically(path, [&](std::ostream& o) { o << text; });
}

const LoadedModel& default_model() {
  // data_file() already prefers $KCAST_DATA_DIR over the compiled-in copy; without any shipped
  // model the initial parameters stand.
  static const LoadedModel m = [] {
    if (embedded_file("models/default.json").empty() && !std::getenv("KCAST_DATA_DIR"))
      return LoadedModel{CostModel(ModelParams(), default_arch_facts()), {}, {}, {}, "<initial>"};
    const std::string text = data_file("models/default.json");
    LoadedModel lm = model_from_json(parse_json_input(text, "data/models/default.json"), "data/models/default.json");
    lm.path = "<default>";
    return lm;
  }();
  return m;
}

LoadedModel model_or_default(const std::string& path) {
  return path.empty() ? default_model() : load_model(path);
}

}  // namespace kcast
