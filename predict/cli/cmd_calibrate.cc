// `kcast calibrate --measurements FILE... [--microbench FILE...] [--base MODEL.json] -o MODEL.json`
// Microbenchmark results become the GPU's measured capabilities in the model (overriding datasheet
// defaults); measured kernel lists fit the model's dimensionless parameters with Ceres. Prints a fit
// report; writes the model atomically (a failed run leaves an existing file untouched).
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "io/console.h"
#include "io/atomic_file.h"
#include "io/file_digest.h"
#include "calibrate/fit.h"
#include "calibrate/measured_priors.h"
#include "io/gpu_database_csv.h"
#include "io/microbench_results.h"
#include "calibrate/score.h"
#include "model/error.h"
#include "predict/cli/commands.h"
#include "predict/cli/options.h"

namespace kcast::cli {

namespace {

GpuMeasured measured_from(const GpuSpec& s) {
  GpuMeasured m;
  m.dram_bw_gbps = s.measured_dram_bw_gbps;
  m.l2_bw_gbps = s.measured_l2_bw_gbps;
  m.launch_us = s.measured_launch_us;
  m.stream_latency_us = s.measured_stream_latency_us;
  m.fp32_tflops = s.measured_fp32_tflops;
  m.gemm_eff = s.measured_gemm_eff;
  m.sgemm_scale = s.measured_sgemm_scale;
  m.conv_scale = s.measured_conv_scale;
  m.context_scale = s.measured_context_scale;
  m.source = s.measured_source;
  return m;
}

// A measured figure beyond the datasheet's peak, or below a tenth of it, is likely a unit or device
// mix-up: calibrate keeps it (a measurement) but says so, naming the file, line, GPU and figure.
void warn_implausible(const MicrobenchResults& r, const GpuSpec& gpu, const std::string& file) {
  auto check = [&](const MicrobenchRow& row, double datasheet, const char* unit) {
    if (!known(row.value) || !known(datasheet) || datasheet <= 0) return;
    const double ratio = row.value / datasheet;
    if (ratio <= 1.05 && ratio >= 0.1) return;
    char buf[320];
    std::snprintf(buf, sizeof buf, "%s:%u: warning: %s%s%s on %s: %.6g %s is %.2fx the datasheet's %.6g %s (%s)",
                  file.c_str(), row.line, row.benchmark.c_str(), row.dtype.empty() ? "" : " ", row.dtype.c_str(),
                  gpu.name.c_str(), row.value, unit, ratio, datasheet, unit,
                  ratio > 1 ? "above its peak: a unit or device mix-up?" : "below a tenth of it: a unit or device mix-up?");
    console_err() << "kcast: " << buf << "\n";
  };
  for (const MicrobenchRow& row : r.rows) {
    if (row.benchmark == "dram_bw" && row.unit == "GB/s") check(row, gpu.dram_bw_gbps, "GB/s");
    if (row.benchmark == "fma_fp32" && row.unit == "TFLOP/s") check(row, gpu.fp32_tflops, "TFLOP/s");
    if (row.benchmark == "gemm_peak" && (row.unit == "TFLOP/s" || row.unit == "TOP/s"))
      if (const std::optional<DType> d = parse_dtype(row.dtype)) check(row, gpu.peak_tflops(*d), row.unit.c_str());
  }
}

// --microbench: each file's figures become its GPU's own measured figures in the model, and the
// measured GPUs' median DRAM efficiency the one of GPUs without a measurement.
void apply_microbenchmarks(LoadedModel& model, const std::vector<std::string>& microbench, const GpuDatabase& db,
                           nlohmann::json& inputs) {
  for (const auto& f : microbench) {
    const std::string text = read_file(f);
    const std::string file = f == "-" ? "<stdin>" : f;
    MicrobenchResults r = parse_microbench_csv(text, file);
    const GpuSpec* resolved = nullptr;
    try {
      resolved = &db.resolve(r.device);
    } catch (const InputError& e) {
      throw InputError(file + ":" + std::to_string(r.rows.empty() ? 1 : r.rows.front().line) + ": column 'device': " +
                       e.what());
    }
    const GpuSpec& gpu = *resolved;
    warn_implausible(r, gpu, file);
    // Its own figures only: a sibling's figures would be stored as this board's own.
    GpuSpec spec = model.spec_for(gpu, false);
    apply_microbench(r, spec);
    model.gpus[gpu.name] = measured_from(spec);
    inputs.push_back(provenance_entry(digest_of(f, text), r.rows.size()));
    console_err() << "kcast: microbenchmarks " << f << " -> " << gpu.name << "\n";
  }
  // Like the per-GPU figures, this is a measurement, not a fitted value: --freeze mem_eff then keeps
  // it through the fit.
  if (!microbench.empty()) {
    if (auto u = set_mem_eff_from_measured(model, db))
      console_err() << "kcast: " << u->param << " = " << u->value << " (median measured/datasheet DRAM bandwidth of "
                << u->gpus << " measured GPUs; used for GPUs without a measurement)\n";
  }

}

// --measurements: the fit of the model's parameters to the measured kernels (those of --exclude-gpu
// and outside --class left out), its error per GPU and class printed and kept in the model.
void fit_measurements(LoadedModel& model, const std::vector<std::string>& files, const std::vector<std::string>& exclude,
                      const std::vector<std::string>& only_class, const FitOptions& fo, const GpuDatabase& db,
                      nlohmann::json& inputs) {
  std::vector<std::string> ex;
  for (const auto& e : exclude) ex.push_back(db.resolve(e).name);
  const MeasuredSet read = read_measurements(files, db);
  console_err() << without_work_note(read, "calibrate");
  MeasuredSet data = filter_gpus(read, ex, false);
  if (!only_class.empty()) {
    std::vector<KernelClass> cls;
    for (const auto& c : only_class) {
      const auto k = parse_kernel_class(c);
      if (!k) throw InputError("option '--class': unknown kernel class '" + c + "' (docs/formats.md lists them)");
      cls.push_back(*k);
    }
    data = filter_classes(data, cls);
    if (data.rows.empty()) throw InputError("option '--class': no measured kernel of that class in --measurements");
  }
  for (const FileDigest& d : data.digests) {
    size_t n = 0;
    for (const auto& r : data.rows) n += r.file == d.file;
    inputs.push_back(provenance_entry(d, n));
  }
  FitReport rep;
  model = fit_model(data, model, fo, &rep);
  console_err() << "kcast: " << rep.brief << "\n";
  console_err() << "kcast: fitted " << data.rows.size() << " rows on " << data.gpus.size() << " GPUs in "
            << rep.seconds << " s\n";
  // The fit error per class and GPU travels with the model.
  nlohmann::json fit = nlohmann::json::array();
  console_printf("%-16s %-14s %7s %8s %8s\n", "gpu", "class", "rows", "median%", "p90%");
  for (const auto& l : score_absolute(data, model)) {
    fit.push_back({{"gpu", l.gpu}, {"class", l.cls}, {"rows", l.stats.rows}, {"median_err", l.stats.median},
                   {"mean_err", l.stats.mean}, {"p90_err", l.stats.p90}});
    console_printf("%-16s %-14s %7zu %8.1f %8.1f\n", l.gpu.c_str(), l.cls.c_str(), l.stats.rows,
                100 * l.stats.median, 100 * l.stats.p90);
  }
  model.fit = {{"per_class_gpu", fit}, {"solver", rep.brief}, {"seconds", rep.seconds}};
}

}  // namespace

int cmd_calibrate(int argc, char** argv) {
  po::options_description opts("kcast calibrate options");
  std::vector<std::string> files, microbench, exclude, freeze, only_class;
  std::string base_path, out_path;
  bool verbose = false;
  int max_iter = 60;
  opts.add_options()("measurements", po::value(&files)->multitoken(),
                     "measured kernel lists (rows with gpu and duration_us)")(
      "microbench", po::value(&microbench)->multitoken(),
      "kcast-microbench result CSVs (also set mem_eff, the DRAM efficiency of unmeasured GPUs, to the measured GPUs' median)")(
      "base", po::value(&base_path), "start from this model.json (default: the shipped model)")(
      "output,o", po::value(&out_path)->required(), "model.json to write")(
      "exclude-gpu", po::value(&exclude)->composing(), "ignore measurements on this GPU (repeatable)")(
      "class", po::value(&only_class)->composing(),
      "fit only the measured kernels of this class (repeatable; e.g. elementwise to anchor the streaming terms)")(
      "freeze", po::value(&freeze)->composing(), "keep this parameter at its base value (repeatable)")(
      "max-iterations", po::value(&max_iter)->default_value(60), "solver iterations")(
      "verbose,v", po::bool_switch(&verbose), "print the solver's progress");
  po::positional_options_description pos;
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "kcast calibrate --measurements FILE... [--microbench FILE...] [--base MODEL.json] "
                     "-o MODEL.json",
                     opts, pos, vm))
    return 0;
  if (files.empty() && microbench.empty())
    throw InputError("calibrate: give --measurements and/or --microbench");
  const GpuDatabase& db = default_gpu_database();
  LoadedModel model = model_or_default(base_path);
  nlohmann::json inputs = nlohmann::json::array();

  apply_microbenchmarks(model, microbench, db, inputs);
  if (!files.empty()) {
    FitOptions fo;
    fo.verbose = verbose;
    fo.max_iterations = max_iter;
    fo.frozen = freeze;
    fit_measurements(model, files, exclude, only_class, fo, db, inputs);
  }
  std::time_t now = std::time(nullptr);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  model.provenance = {{"inputs", inputs}, {"created", ts}, {"kcast_version", KCAST_VERSION},
                      {"base", base_path.empty() ? model.path : base_path}};
  save_model(model, out_path);
  console_err() << "kcast: wrote " << out_path << "\n";
  return 0;
}

}  // namespace kcast::cli
