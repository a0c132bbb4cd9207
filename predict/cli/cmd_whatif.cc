// `kcast whatif` (docs/cli-contract.md): the workload on a modified GPU, a knob sweep, and the walls study. Thin:
// options here, the work in predict/whatif, the output in predict/report.
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
#include "predict/report/whatif_values.h"
#include "predict/whatif/whatif.h"

namespace kcast::cli {

int cmd_whatif(int argc, char** argv) {
  po::options_description opts("kcast whatif options");
  std::string kernels, gpu, model, format = "table", html, sweep;
  std::vector<std::string> sets, scales;
  bool walls = false;
  E2eCliOptions e2e;
  std::string knob_list;
  for (const auto& k : kKnobs) knob_list += (knob_list.empty() ? "" : ", ") + std::string(k.name) + " (" + k.unit + ")";
  opts.add_options()("kernels", po::value(&kernels)->required(), "kernel list (kcast CSV; '-' = stdin)")(
      "gpu", po::value(&gpu)->required(), "the GPU to modify")(
      "model", po::value(&model), "model.json (default: the shipped model)")(
      "set", po::value(&sets)->composing(), ("KNOB=VALUE; knobs: " + knob_list).c_str())(
      "scale", po::value(&scales)->composing(), "KNOB=FACTOR (applied after every --set)")(
      "sweep", po::value(&sweep), "KNOB=START:STOP:STEPS, on top of --set/--scale")(
      "walls", po::bool_switch(&walls), "2x compute for compute-bound kernels, 2x bandwidth for memory-bound, both, launch/2")(
      "format", po::value(&format)->default_value("table"), "table, csv or json")(
      "html", po::value(&html), "write a self-contained HTML report with charts");
  e2e.add_to(opts);
  po::positional_options_description pos;
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "kcast whatif --kernels FILE --gpu NAME [--model MODEL.json] [--set KNOB=VALUE]... "
                     "[--scale KNOB=FACTOR]... [--sweep KNOB=START:STOP:STEPS] [--walls] "
                     "[--format table|csv|json] [--html OUT.html]",
                     opts, pos, vm))
    return 0;
  const Format fmt = parse_format(format);
  const E2eOptions eo = e2e.options();
  WhatifSpec ws;
  for (const auto& s : sets) {
    auto [k, v] = parse_knob_assignment(s, "--set");
    ws.changes.push_back({k, false, v});
  }
  for (const auto& s : scales) {
    auto [k, v] = parse_knob_assignment(s, "--scale");
    ws.changes.push_back({k, true, v});
  }
  if (!sweep.empty()) ws.sweep = parse_sweep(sweep, "--sweep");
  ws.walls = walls;

  const GpuDatabase& db = default_gpu_database();
  const GpuSpec* spec = nullptr;
  try {
    spec = &db.resolve(gpu);
  } catch (const InputError& e) {
    if (gpu.find(',') != std::string::npos)
      throw InputError("option '--gpu': whatif studies one GPU at a time (got '" + gpu + "'); run it once per GPU");
    throw InputError(std::string("option '--gpu': ") + e.what());
  }
  note_if_announced(*spec);
  const LoadedModel lm = model_or_default(model);
  const GpuCaps base = lm.caps_for(*spec);
  apply_changes(base, ws.changes);  // reject bad knob values before reading the kernel list
  const KernelTable rows = read_kernel_table(kernels, KernelListOptions{&db, &default_classifier()});
  require_kernel_rows(rows, kernels);
  const PreparedWorkload w = prepare_workload(rows, lm, db, eo, kernels);
  if (const std::string warn = unknown_work_warning(w, kernels); !warn.empty())
    console_err() << "kcast whatif: warning: " << warn << "\n";
  require_interconnect(w, base);
  const WhatifResult r = run_whatif(w, *spec, base, ws);
  const WhatifValues v = make_whatif_values(r, ws, kernels, lm.path.empty() ? "<default>" : lm.path);
  if (!html.empty()) write_file_atomically(html, [&](std::ostream& o) { o << whatif_html(v); });
  if (fmt == Format::json) console_out() << whatif_json(v).dump(2) << "\n";
  else if (fmt == Format::csv) render_whatif_csv(v, console_out());
  else render_whatif_table(v, console_out());
  return 0;
}

}  // namespace kcast::cli
