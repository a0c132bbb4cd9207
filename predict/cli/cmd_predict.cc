// `kcast predict` (docs/cli-contract.md): a kernel list's predicted time on one or more GPUs. Thin: options here,
// the work in predict/e2e (predictor), the output in predict/report (values struct + renderers).
#include <iostream>

#include "io/console.h"
#include "io/atomic_file.h"
#include "io/classifier_rules.h"
#include "io/gpu_database_csv.h"
#include "io/kernel_list_csv.h"
#include "calibrate/model_file.h"
#include "model/error.h"
#include "predict/cli/commands.h"
#include "predict/cli/e2e_cli_options.h"
#include "predict/cli/options.h"
#include "predict/e2e/predictor.h"
#include "predict/report/per_kernel_csv.h"
#include "predict/report/predict_values.h"

namespace kcast::cli {

int cmd_predict(int argc, char** argv) {
  po::options_description opts("kcast predict options");
  std::string kernels, gpus, model, per_kernel, format = "table", html;
  E2eCliOptions e2e;
  opts.add_options()("kernels", po::value(&kernels)->required(), "kernel list (kcast CSV; '-' = stdin)")(
      "gpu", po::value(&gpus)->required(), "target GPU(s), comma-separated: NAME[,NAME...]")(
      "model", po::value(&model), "model.json (default: the shipped model)")(
      "per-kernel", po::value(&per_kernel), "write one row per input row and GPU to this CSV")(
      "format", po::value(&format)->default_value("table"), "table, csv or json")(
      "html", po::value(&html), "write a self-contained HTML report with charts")(
      "by-prefix", "also break the time down by name prefix (up to the first '.': synth's embed., layer., "
      "head., optimizer., prefill., decode@N., ...)");
  e2e.add_to(opts);
  po::positional_options_description pos;
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "kcast predict --kernels FILE --gpu NAME[,NAME...] [--model MODEL.json] "
                     "[--mode auto|transfer|absolute] [--per-kernel OUT.csv] [--format table|csv|json] "
                     "[--html OUT.html] [--cuda-graph] [--with-context] [--by-prefix]",
                     opts, pos, vm))
    return 0;
  const Format fmt = parse_format(format);
  E2eOptions eo = e2e.options();
  const bool by_prefix = vm.count("by-prefix") > 0;
  eo.keep_rows = !per_kernel.empty() || by_prefix;

  const GpuDatabase& db = default_gpu_database();
  const std::vector<const GpuSpec*> specs = resolve_gpu_list(db, gpus);
  const LoadedModel lm = model_or_default(model);
  const KernelTable rows = read_kernel_table(kernels, KernelListOptions{&db, &default_classifier()});
  require_kernel_rows(rows, kernels);
  const PreparedWorkload w = prepare_workload(rows, lm, db, eo, kernels);
  if (const std::string warn = unknown_work_warning(w, kernels); !warn.empty())
    console_err() << "kcast predict: warning: " << warn << "\n";
  std::vector<Target> targets;
  for (const GpuSpec* s : specs) targets.push_back({s->name, lm.caps_for(*s)});
  const std::vector<GpuPrediction> preds = predict_targets(w, targets);

  PredictValues v = make_predict_values(w, preds, specs, kernels, lm.path.empty() ? "<default>" : lm.path);
  if (by_prefix) add_prefix_breakdown(v, w, preds);
  // Both files replace what they overwrite only once both are written.
  StagedOutputs outs;
  if (!per_kernel.empty()) {
    std::vector<GpuCaps> caps;
    for (const Target& t : targets) caps.push_back(t.caps);
    outs.stage(per_kernel, [&](std::ostream& o) { write_per_kernel_csv(w, preds, caps, o); });
  }
  if (!html.empty()) outs.stage(html, [&](std::ostream& o) { o << predict_html(v); });
  outs.commit();
  if (fmt == Format::json) console_out() << predict_json(v).dump(2) << "\n";
  else if (fmt == Format::csv) render_predict_csv(v, console_out());
  else render_predict_table(v, console_out());
  return 0;
}

}  // namespace kcast::cli
