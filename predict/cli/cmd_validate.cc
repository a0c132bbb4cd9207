// `kcast validate --measurements FILE... [--model M] [--holdout-gpu NAME]... [--format ...]`
// Accuracy on measured data, per GPU and class, in absolute and transfer mode. With --holdout-gpu the
// model is refitted without those GPUs (starting from --model or the default) and only they are
// scored: the use case is predicting GPUs the model has never seen.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "io/console.h"
#include "io/atomic_file.h"
#include "calibrate/fit.h"
#include "io/gpu_database_csv.h"
#include "calibrate/score.h"
#include "model/error.h"
#include "predict/cli/commands.h"
#include "predict/cli/options.h"

namespace kcast::cli {

namespace {

void print_table(const std::vector<ScoreLine>& lines, bool only_all) {
  console_printf("%-9s %-16s %-16s %-14s %7s %8s %8s %8s\n", "mode", "source", "gpu", "class", "rows",
              "median%", "mean%", "p90%");
  for (const auto& l : lines) {
    if (only_all && l.cls != "all") continue;
    console_printf("%-9s %-16s %-16s %-14s %7zu %8.1f %8.1f %8.1f\n", l.mode.c_str(),
                l.source.empty() ? "-" : l.source.c_str(), l.gpu.c_str(), l.cls.c_str(), l.stats.rows,
                100 * l.stats.median, 100 * l.stats.mean, 100 * l.stats.p90);
  }
}

void write_per_row(const MeasuredSet& s, const LoadedModel& m, const std::string& path) {
  const std::vector<GpuCaps> caps = measured_caps(s, m);
  write_file_atomically(path, [&](std::ostream& o) {
    o << "gpu,class,dtype,context,batch,m,n,k,flops,bytes,measured_us,predicted_us,bound,rel_err\n";
    char buf[512];
    for (const auto& r : s.rows) {
      const Kernel& k = r.kernel;
      const KernelPrediction p = m.model.predict(k, caps[r.gpu_index]);
      const double pred = p.time_us + context_floor_us(m, k, caps[r.gpu_index]);
      std::snprintf(buf, sizeof buf, "%s,%s,%s,%s,%lld,%lld,%lld,%lld,%.6g,%.6g,%.4f,%.4f,%s,%.5f\n",
                    s.gpus[r.gpu_index]->name.c_str(), std::string(to_string(k.cls)).c_str(),
                    std::string(to_string(k.dtype)).c_str(), k.context.c_str(), (long long)k.batch,
                    (long long)k.m, (long long)k.n, (long long)k.k, k.flops, k.bytes, k.duration_us, pred,
                    std::string(to_string(p.bound)).c_str(), (pred - k.duration_us) / k.duration_us);
      o << buf;
    }
  });
}

// --holdout-gpu: the model refitted without the held-out GPUs' rows, which become the only ones scored.
void refit_without(const std::vector<std::string>& held, const MeasuredSet& all, const FitOptions& fo,
                   LoadedModel& model, MeasuredSet& targets, MeasuredSet& sources) {
  // A held-out board's fitted SGEMM, convolution and rig scales came from its own measurements:
  // they must not help predict them (microbenchmark figures stay: they are not the scored data).
  for (const auto& h : held)
    if (auto it = model.gpus.find(h); it != model.gpus.end())
      it->second.sgemm_scale = it->second.conv_scale = it->second.context_scale = kUnknown;
  targets = filter_gpus(all, held, true);
  sources = filter_gpus(all, held, false);
  if (targets.rows.empty()) throw InputError("validate: no measured rows on the held-out GPU(s)");
  if (sources.rows.empty()) throw InputError("validate: nothing left to fit after holding out the GPU(s)");
  FitReport rep;
  model = fit_model(sources, model, fo, &rep);
  console_err() << "kcast: refitted without";
  for (const auto& h : held) console_err() << " " << h;
  console_err() << " on " << sources.rows.size() << " rows in " << rep.seconds << " s (" << rep.iterations
            << " iterations)\n";
}

void render_scores(const std::vector<ScoreLine>& lines, Format fmt, const std::vector<std::string>& held,
                   size_t target_rows, bool summary_only) {
  if (fmt == Format::json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& l : lines)
      arr.push_back({{"mode", l.mode}, {"source_gpu", l.source}, {"gpu", l.gpu}, {"class", l.cls},
                     {"rows", l.stats.rows}, {"median_err", l.stats.median}, {"mean_err", l.stats.mean},
                     {"p90_err", l.stats.p90}});
    nlohmann::json out = {{"holdout_gpus", held}, {"rows", target_rows}, {"scores", arr}};
    console_out() << out.dump(2) << "\n";
  } else if (fmt == Format::csv) {
    console_out() << "mode,source_gpu,gpu,class,rows,median_err,mean_err,p90_err\n";
    for (const auto& l : lines)
      console_printf("%s,%s,%s,%s,%zu,%.6f,%.6f,%.6f\n", l.mode.c_str(), l.source.c_str(), l.gpu.c_str(),
                  l.cls.c_str(), l.stats.rows, l.stats.median, l.stats.mean, l.stats.p90);
  } else {
    print_table(lines, summary_only);
  }
}

}  // namespace

int cmd_validate(int argc, char** argv) {
  po::options_description opts("kcast validate options");
  std::vector<std::string> files, holdout, freeze;
  std::string model_path, format = "table";
  std::string per_row;
  bool summary_only = false, verbose = false, no_transfer = false, without_names = false;
  int max_iter = 60;
  opts.add_options()("measurements", po::value(&files)->multitoken()->required(),
                     "measured kernel lists (rows with gpu and duration_us)")(
      "model", po::value(&model_path), "model.json (default: the shipped model)")(
      "holdout-gpu", po::value(&holdout)->composing(), "refit without this GPU and score only it (repeatable)")(
      "format", po::value(&format)->default_value("table"), "table, csv or json")(
      "summary", po::bool_switch(&summary_only), "table: only the per-GPU 'all' lines")(
      "no-transfer", po::bool_switch(&no_transfer), "skip transfer-mode scoring")(
      "max-iterations", po::value(&max_iter)->default_value(60), "refit iterations with --holdout-gpu")(
      "freeze", po::value(&freeze)->composing(), "keep this parameter fixed in the refit (repeatable)")(
      "per-row", po::value(&per_row), "write each scored row's absolute-mode prediction to this CSV")(
      "without-names", po::bool_switch(&without_names),
      "score the scored rows as if their kernel names were unknown: no SGEMM tile from the name, no cuDNN "
      "algorithm (what a GPU with no trace of its own gets); the fit keeps them")(
      "verbose,v", po::bool_switch(&verbose), "print the solver's progress");
  po::positional_options_description pos;
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "kcast validate --measurements FILE... [--model M] [--holdout-gpu NAME]... "
                     "[--format table|csv|json]",
                     opts, pos, vm))
    return 0;
  const Format fmt = parse_format(format);
  const GpuDatabase& db = default_gpu_database();
  std::vector<std::string> held;
  for (const auto& h : holdout) held.push_back(db.resolve(h).name);
  const MeasuredSet all = read_measurements(files, db);
  // Nothing to score is an error, not an empty table a script would read as "no error".
  if (all.rows.empty()) throw InputError("validate: no measured rows (need 'gpu' and 'duration_us')");
  console_err() << without_work_note(all, "validate");
  LoadedModel model = model_or_default(model_path);

  MeasuredSet targets = all, sources = all;
  if (!held.empty()) {
    FitOptions fo;
    fo.verbose = verbose;
    fo.max_iterations = max_iter;
    fo.frozen = freeze;
    refit_without(held, all, fo, model, targets, sources);
  }
  // The scored GPU's own kernel names say which tile (and cuDNN algorithm) its library chose: a
  // prediction for a GPU without a trace of its own has no such names.
  if (without_names)
    for (auto& r : targets.rows) r.kernel.tile = {}, r.kernel.conv_algo = ConvAlgo::unknown, r.kernel.row_read_once = false, r.kernel.mma_sync = false;
  if (!per_row.empty()) write_per_row(targets, model, per_row);
  std::vector<ScoreLine> lines = score_absolute(targets, model);
  if (!no_transfer) {
    auto t = score_transfer(targets, sources, model);
    lines.insert(lines.end(), t.begin(), t.end());
  }
  render_scores(lines, fmt, held, targets.rows.size(), summary_only);
  return 0;
}

}  // namespace kcast::cli
