// `kcast plan train MODEL --gpu G --gpus N --batch GBS --seq S ...` (docs/plan.md): the best parallel
// layouts for a training run, each predicted as `kcast synth --mode train --gpu` predicts it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <iostream>
#include <sstream>

#include "calibrate/model_file.h"
#include "io/atomic_file.h"
#include "io/console.h"
#include "io/gpu_database_csv.h"
#include "model/error.h"
#include "predict/cli/commands.h"
#include "predict/cli/moe_options.h"
#include "predict/cli/options.h"
#include "predict/cli/speculative_options.h"
#include "predict/plan/plan_html.h"
#include "predict/plan/plan_serve.h"
#include "predict/plan/plan_train.h"
#include "predict/report/text_util.h"
#include "predict/synth/cuda_graph_modules.h"
#include "predict/synth/recompute_modules.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer/moe_dispatch.h"
#include "predict/synth/transformer/recipe.h"
#include "predict/synth/transformer_config.h"

namespace kcast::cli {

namespace {

using plan::TrainCandidate;

// The model's configuration: a built-in, a zoo model or a Hugging Face config.json.
synth::TransformerConfig transformer_of(const std::string& model, const std::string& config) {
  if (!config.empty()) return synth::read_hf_config(config);
  if (const auto* b = synth::find_builtin_transformer(model)) return *b;
  if (auto z = synth::zoo_config(model)) return *z;
  throw InputError("plan: '" + model + "' is not a transformer kcast synthesizes (see kcast synth --list)");
}

struct PlanArgs {
  std::string what, model, config, gpu, dtype = "bf16", recipe, framework = "megatron", fix, format = "table",
      cost_model_file, moe_dispatcher = "alltoall", html, cuda_graph_modules;
};

// The `kcast synth` command line that reproduces a candidate's figures.
std::string command_of(const TrainCandidate& c, const PlanArgs& a, int64_t seq) {
  const synth::SynthOptions& o = c.options;
  std::ostringstream s;
  s << "kcast synth " << (a.config.empty() ? a.model : "--config " + a.config) << " --mode train --batch " << o.batch
    << " --seq " << seq << " --dtype " << a.dtype;
  if (o.recipe != synth::Recipe::none) s << " --recipe " << synth::transformer::to_string(o.recipe);
  s << " --framework " << synth::to_string(o.framework) << " --attention flash --master-weights";
  if (o.compile) s << " --compile";
  s << " --zero " << o.zero << " --tp " << o.tp << " --pp " << o.pp << " --cp " << o.cp << " --dp " << o.dp;
  if (o.ep > 1) {
    s << " --ep " << o.ep;
    if (o.etp > 0) s << " --etp " << o.etp;
    if (o.moe_dispatcher != synth::MoeDispatcher::alltoall) s << " --moe-dispatcher " << synth::to_string(o.moe_dispatcher);
    if (o.moe_a2a_overlap) s << " --moe-a2a-overlap";
    if (o.moe_load_imbalance != 1) s << " --moe-load-imbalance " << o.moe_load_imbalance;
  }
  if (o.moe_capacity_factor > 0) {
    s << " --moe-expert-capacity-factor " << o.moe_capacity_factor;
    if (o.moe_pad_to_capacity) s << " --moe-pad-expert-input-to-capacity";
  }
  if (o.fp8_param_gather) s << " --fp8-param-gather";
  if (o.cuda_graph_modules) s << " --cuda-graph-modules " << synth::cuda_graph_modules_string(o.cuda_graph_modules);
  if (o.mtp_layers > 0) s << " --mtp-layers " << o.mtp_layers;
  if (o.virtual_stages > 1) s << " --virtual-stages " << o.virtual_stages;
  s << " --microbatches " << o.microbatches;
  if (o.sequence_parallel) s << " --sequence-parallel";
  if (c.layout.modules) s << " --recompute-modules " << synth::recompute_modules_string(c.layout.modules);
  else if (c.layout.recompute != plan::Recompute::none) s << " --recompute " << plan::to_string(c.layout.recompute);
  if (c.layout.recompute_layers > 0) s << " --recompute-layers " << c.layout.recompute_layers;
  if (c.layout.offload_layers > 0) s << " --cpu-offload-layers " << c.layout.offload_layers;
  // synth with --gpu takes the GPU's scale-up domain as its node unless told otherwise.
  const GpuSpec* g = default_gpu_database().find(a.gpu);
  if (!g || o.gpus_per_node != g->domain_size) s << " --gpus-per-node " << o.gpus_per_node;
  s << " --gpu " << a.gpu << " --format json -o /dev/null";
  return s.str();
}

nlohmann::json candidate_json(const TrainCandidate& c, const PlanArgs& a, int64_t seq) {
  const auto& l = c.layout;
  nlohmann::json j = {{"tp", l.tp}, {"pp", l.pp}, {"cp", l.cp}, {"ep", l.ep}, {"dp", l.dp}, {"vp", l.vp},
                      {"microbatches", l.microbatches}, {"micro_batch_size", l.mbs},
                      {"recompute", plan::to_string(l.recompute)}, {"zero", c.options.zero}};
  // Megatron's modules where the layout recomputes some (recompute "selective"); else empty.
  j["recompute_modules"] = synth::recompute_module_names(l.modules);
  // With recompute "full": the block method's layers a chunk (0: every layer).
  j["recompute_layers"] = l.recompute_layers;
  // Megatron's CPU activation offloading instead of recomputation: its layers (0: none).
  j["cpu_offload_layers"] = l.offload_layers;
  j.update(step_json_of(c.timing, c.fit, c.options));
  j["command"] = command_of(c, a, seq);
  return j;
}

void write_table(const std::vector<const TrainCandidate*>& top, std::ostream& os) {
  using report::fixed;
  os << "rank  tp pp cp ep   dp vp  mbs  micro  recompute           zero   step (s)  tokens/s/GPU   MFU  memory GB  exposed comm  "
        "bubble  recompute s  exposed host\n";
  int rank = 1;
  for (const TrainCandidate* c : top) {
    const auto& l = c->layout;
    const auto& t = c->timing;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%4d %3lld %2lld %2lld %2lld %4lld %2lld %4lld %6lld  %-19s %4d %9s %13s %5s %10s %13s %7s %12s %13s\n",
                  rank++, (long long)l.tp, (long long)l.pp, (long long)l.cp, (long long)l.ep, (long long)l.dp,
                  (long long)l.vp, (long long)l.mbs, (long long)l.microbatches, plan::recompute_label(l).c_str(),
                  c->options.zero,
                  fixed(t.step_us * 1e-6, 3).c_str(), fixed(t.tokens_per_s_per_gpu(), 0).c_str(),
                  known(t.mfu) ? (fixed(t.mfu * 100, 1) + "%").c_str() : "-", fixed(c->fit.need_bytes * 1e-9, 1).c_str(),
                  fixed(t.exposed_comm_us * 1e-6, 3).c_str(), fixed(t.bubble_us * 1e-6, 3).c_str(),
                  fixed(t.recompute_us * 1e-6, 3).c_str(), fixed(t.exposed_host_us * 1e-6, 3).c_str());
    os << buf;
  }
}

// What both plan commands check and load once parsed: MODEL or --config, the required options, the
// output format, the GPU and the cost model.
struct PlanBasics {
  Format fmt;
  const GpuSpec* gpu;
  LoadedModel lm;
};
PlanBasics plan_basics(const po::variables_map& vm, const std::string& model, const std::string& config,
                       const std::string& gpu, const std::string& format, const std::string& cost_model,
                       std::initializer_list<const char*> required, const char* what) {
  if (model.empty() == config.empty()) throw InputError(std::string(what) + ": give a MODEL or --config FILE.json");
  for (const char* option : required)
    if (!vm.count(option)) throw InputError(std::string("option '--") + option + "': required");
  const GpuSpec& g = default_gpu_database().resolve(gpu);
  note_if_announced(g);
  return {parse_format(format), &g, model_or_default(cost_model)};
}


int plan_train_cmd(int argc, char** argv) {
  po::options_description opts("kcast plan train options");
  PlanArgs a;
  opts.add_options()("model", po::value(&a.model), "a built-in or zoo model (positional; see kcast synth --list)")(
      "config", po::value(&a.config), "Hugging Face config.json (instead of MODEL)")(
      "gpu", po::value(&a.gpu), "the GPU to train on")("gpus", po::value<int64_t>(), "GPUs in all")(
      "batch", po::value<int64_t>(), "global batch, sequences")("seq", po::value<int64_t>(), "sequence length")(
      "dtype", po::value(&a.dtype)->default_value("bf16"), "bf16, fp8 or fp4")(
      "recipe", po::value(&a.recipe), "with fp8 / fp4: delayed, current, mxfp8, block, nvfp4 (default delayed / nvfp4)")(
      "framework", po::value(&a.framework)->default_value("megatron"), "megatron (distributed optimizer), torchtitan "
      "or automodel (FSDP: ZeRO 3)")("compile", "torchtitan / automodel: torch.compile's fused kernels")(
      "gpus-per-node", po::value<int64_t>(), "GPUs per node (default: the GPU's scale-up domain, 8 on HGX boards, 72 in an NVL72 rack): tensor parallelism stays within one")(
      "memory-fraction", po::value<double>(), "the share of GPU memory a layout may fill (default 0.9: the rest "
      "goes to the CUDA context, NCCL buffers, workspaces and fragmentation)")(
      "etp", po::value<int64_t>(), "mixtures: expert tensor parallelism of every layout with --ep, 1 (whole experts, "
      "Megatron-Bridge's MoE recipes) or omitted (each expert split over --tp where --ep divides --dp)")(
      "moe-dispatcher", po::value(&a.moe_dispatcher)->default_value("alltoall"), "mixtures: alltoall, deepep, "
      "hybridep or allgather (as kcast synth)")(
      "moe-a2a-overlap", "mixtures, megatron: the dispatch and combine behind the other micro-batch's compute")(
      "moe-expert-capacity-factor", po::value<double>(), "mixtures, megatron: token dropping (as kcast synth)")(
      "moe-pad-expert-input-to-capacity", "with --moe-expert-capacity-factor: rows padded to capacity (as kcast synth)")(
      "moe-load-imbalance", po::value<double>(), "mixtures: the busiest expert-parallel GPU's rows over the mean on "
      "every layout with --ep 2 or more (as kcast synth; default 1, balanced)")(
      "mtp-layers", po::value<int64_t>(), "multi-token prediction depths (as kcast synth)")(
      "fp8-param-gather", "megatron, FP8 recipes: FP8 parameters (as kcast synth; layouts with Megatron FSDP keep "
      "16-bit ones)")(
      "cuda-graph-modules", po::value(&a.cuda_graph_modules), "megatron: per-layer CUDA graphs on every layout, "
      "attn, mlp, moe_router, moe_preprocess (as kcast synth)")(
      "fix", po::value(&a.fix), "hold some of the layout: tp=8,pp=4,cp=1,ep=8,dp=..,vp=..,mbs=..,microbatches=..,"
      "recompute=none|selective|full|MODULE+MODULE,zero=1|3,offload=N (0: none)")("top", po::value<int64_t>(), "candidates shown (default 10)")(
      "threads", po::value<unsigned>(), "worker threads (default: all cores)")(
      "format", po::value(&a.format)->default_value("table"), "table, csv or json")(
      "html", po::value(&a.html), "also write the candidates shown as a self-contained page here")(
      "cost-model", po::value(&a.cost_model_file), "the model.json to predict with (default: the shipped model)");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "kcast plan train MODEL|--config HF.json --gpu G --gpus N --batch GBS --seq S\n"
                     "       [--dtype bf16|fp8|fp4] [--recipe R] [--framework megatron|torchtitan|automodel] [--compile]\n"
                     "       [--etp 1] [--moe-dispatcher alltoall|deepep|hybridep|allgather] [--moe-a2a-overlap]\n"
                     "       [--moe-expert-capacity-factor F [--moe-pad-expert-input-to-capacity]] [--moe-load-imbalance F]\n"
                     "       [--mtp-layers N] [--fp8-param-gather] [--cuda-graph-modules LIST] [--fix tp=8,...] [--memory-fraction F] [--top K] [--format table|csv|json]\n"
                     "       [--html OUT.html] [--threads N]\n"
                     "       [--cost-model M.json]",
                     opts, pos, vm))
    return 0;
  const PlanBasics basics = plan_basics(vm, a.model, a.config, a.gpu, a.format, a.cost_model_file,
                                        {"gpu", "gpus", "batch", "seq"}, "plan train");
  // Required (plan_basics checked them) or guarded by vm.count: never the fallback.
  const auto positive = [&](const char* option) { return positive_int(vm, option, 0); };
  const Format fmt = basics.fmt;
  const GpuDatabase& db = default_gpu_database();
  const GpuSpec& gpu = *basics.gpu;
  const LoadedModel& lm = basics.lm;

  const synth::TransformerConfig cfg = transformer_of(a.model, a.config);
  synth::SynthOptions base;
  base.dtype = dtype_named("dtype", a.dtype);
  base.attention = synth::AttentionImpl::flash;
  base.master_weights = true;
  base.framework = pick<synth::Framework>("framework", a.framework,
                                          {{"megatron", synth::Framework::megatron},
                                           {"torchtitan", synth::Framework::torchtitan},
                                           {"automodel", synth::Framework::automodel}});
  base.zero = base.framework == synth::Framework::megatron ? 1 : 3;  // distributed optimizer / FSDP
  // The mixture's settings every layout shares (synth's options; its checks refuse what does not apply).
  if (vm.count("etp")) {
    base.etp = positive_int(vm, "etp", 1);
    if (base.etp != 1) throw InputError("option '--etp': plan train takes 1 (whole experts) or leaves it out");
  }
  base.moe_dispatcher = synth::transformer::moe_dispatcher_option(a.moe_dispatcher);
  base.moe_a2a_overlap = vm.count("moe-a2a-overlap") > 0;
  read_moe_routing_options(vm, base);
  base.fp8_param_gather = vm.count("fp8-param-gather") > 0;
  if (vm.count("cuda-graph-modules"))
    base.cuda_graph_modules = synth::parse_cuda_graph_modules("cuda-graph-modules", a.cuda_graph_modules);
  if (vm.count("mtp-layers")) base.mtp_layers = positive_int(vm, "mtp-layers", 1);
  plan::LayoutSpace space;
  space.default_zero = base.zero;
  space.megatron_fsdp = base.framework == synth::Framework::megatron;
  space.gpus = positive("gpus");
  space.batch = positive("batch");
  space.seq = positive("seq");
  space.layers = cfg.layers;
  space.heads = cfg.heads;
  space.kv_heads = cfg.kv_heads;
  space.experts = cfg.experts;
  space.gpus_per_node = vm.count("gpus-per-node") ? positive("gpus-per-node") : domain_gpus_per_node({&gpu}, space.gpus);
  if (!a.fix.empty()) space.fixed = plan::parse_fix(a.fix);
  const std::vector<plan::TrainLayout> layouts = plan::enumerate_train_layouts(space);
  if (layouts.empty())
    throw InputError("plan train: no layout of " + std::to_string(space.gpus) + " GPUs divides the batch of " +
                     std::to_string(space.batch) + (a.fix.empty() ? "" : " with --fix " + a.fix));

  base.seq = space.seq;
  base.gpus_per_node = space.gpus_per_node;
  base.compile = vm.count("compile") > 0;
  base.recipe = synth::transformer::recipe_option(a.recipe, true, base.dtype);
  check_recipe_units(base, {&gpu});
  const plan::StepSynthesizer step = [&](const synth::SynthOptions& o, synth::Footprint* f) {
    return a.config.empty() ? synth::synthesize(a.model, o, f) : synth::synthesize_config_file(a.config, o, f);
  };
  const unsigned threads = vm.count("threads") ? vm["threads"].as<unsigned>() : 0;
  const double fraction = vm.count("memory-fraction") ? vm["memory-fraction"].as<double>() : 0.9;
  if (!(fraction > 0 && fraction <= 1)) throw InputError("option '--memory-fraction': a share from 0 to 1");
  // Megatron's module sets, where recomputation is the planner's to choose (not --fix recompute=...).
  plan::RecomputeLadder ladder;
  if (base.framework == synth::Framework::megatron) {
    const auto recompute = space.fixed.find("recompute");
    const bool free = recompute == space.fixed.end();
    ladder = {free ? plan::recompute_module_ladder(cfg) : std::vector<unsigned>{}, cfg.layers, free,
              !space.fixed.count("offload") && (free || recompute->second == 0)};
  }
  const std::vector<TrainCandidate> all =
      plan::plan_train(step, base, layouts, space.batch, gpu, lm, db, threads, fraction, ladder);

  size_t ranked = 0, no_fit = 0, refused = 0;
  const TrainCandidate *first_no_fit = nullptr, *first_refused = nullptr;
  for (const TrainCandidate& c : all) {
    if (c.status == TrainCandidate::Status::ranked) ++ranked;
    else if (c.status == TrainCandidate::Status::no_fit) no_fit++, first_no_fit = first_no_fit ? first_no_fit : &c;
    else refused++, first_refused = first_refused ? first_refused : &c;
  }
  console_err() << "kcast plan: " << layouts.size() << " layouts on " << space.gpus << " x " << gpu.name << ": "
                << ranked << " ranked, " << no_fit << " do not fit"
                << (first_no_fit ? " (e.g. tp " + std::to_string(first_no_fit->layout.tp) + " pp " +
                                       std::to_string(first_no_fit->layout.pp) + ": " + first_no_fit->why + ")"
                                 : "")
                << ", " << refused << " refused by synth" << (first_refused ? " (e.g. " + first_refused->why + ")" : "")
                << "\n";
  if (ranked == 0) {
    // One line naming the closest miss: the layout needing the least memory, else synth's refusal.
    const TrainCandidate* closest = nullptr;
    for (const TrainCandidate& c : all)
      if (c.status == TrainCandidate::Status::no_fit && (!closest || c.fit.need_bytes < closest->fit.need_bytes))
        closest = &c;
    if (closest)
      throw InputError("plan train: no layout of " + std::to_string(space.gpus) + " GPUs fits " + gpu.name +
                       "; the closest (tp " + std::to_string(closest->layout.tp) + " pp " +
                       std::to_string(closest->layout.pp) + " cp " + std::to_string(closest->layout.cp) + " dp " +
                       std::to_string(closest->layout.dp) + ", micro-batch " + std::to_string(closest->layout.mbs) +
                       ", recompute " + plan::recompute_label(closest->layout) + ") " + closest->why);
    throw InputError("plan train: every layout is refused, e.g. " + (first_refused ? first_refused->why : ""));
  }
  const int64_t top_k = vm.count("top") ? vm["top"].as<int64_t>() : 10;
  if (top_k <= 0) throw InputError("option '--top': a positive count");
  std::vector<const TrainCandidate*> top;
  for (const TrainCandidate& c : all)
    if (c.status == TrainCandidate::Status::ranked && int64_t(top.size()) < top_k) top.push_back(&c);
  // The candidates' JSON, built once for the page, --format json and csv.
  nlohmann::json list = nlohmann::json::array();
  std::vector<std::string> labels;
  for (const TrainCandidate* c : top) {
    list.push_back(candidate_json(*c, a, space.seq));
    mark_announced(list.back(), gpu);
    const auto& l = c->layout;
    labels.push_back("tp" + std::to_string(l.tp) + " pp" + std::to_string(l.pp) + " cp" + std::to_string(l.cp) +
                     (l.ep > 1 ? " ep" + std::to_string(l.ep) : ""));
  }
  if (!a.html.empty()) {  // written (atomically) before anything is printed
    const std::string page = plan::plan_html(
        "kcast plan train: " + (a.config.empty() ? a.model : a.config),
        std::to_string(space.gpus) + " x " + gpu.name + ", global batch " + std::to_string(space.batch) + " x " +
            std::to_string(space.seq) + " tokens; the fitting layouts best first",
        {{"TP", "tp"}, {"PP", "pp"}, {"CP", "cp"}, {"EP", "ep"}, {"DP", "dp"}, {"VP", "vp"},
         {"micro-batch", "micro_batch_size"}, {"recompute", "recompute"}, {"offloaded layers", "cpu_offload_layers"},
         {"step (s)", "step_s", 3},
         {"tokens/s/GPU", "tokens_per_s_per_gpu"}, {"MFU", "mfu", 3}, {"memory GB", "memory_gb", 1},
         {"exposed comm (s)", "exposed_comm_s", 3}, {"bubble (s)", "bubble_s", 3},
         {"exposed host (s)", "exposed_host_s", 3}},
        list, labels, "tokens_per_s_per_gpu", "tokens/s per GPU");
    write_file_atomically(a.html, [&](std::ostream& os) { os << page; });
  }
  if (fmt == Format::json) {
    console_out() << list.dump(2) << "\n";
  } else if (fmt == Format::csv) {
    console_out() << "rank,tp,pp,cp,ep,dp,vp,microbatches,micro_batch_size,recompute,step_s,tokens_per_s_per_gpu,mfu,"
                     "memory_gb,exposed_comm_s,bubble_s,recompute_s,command,zero,cpu_offload_layers,exposed_host_s\n";
    for (size_t i = 0; i < top.size(); ++i) {
      const TrainCandidate* c = top[i];
      const nlohmann::json& j = list[i];
      console_out() << i + 1;
      for (const char* k : {"tp", "pp", "cp", "ep", "dp", "vp", "microbatches", "micro_batch_size"}) console_out() << "," << j[k];
      console_out() << "," << plan::recompute_label(c->layout);
      for (const char* k : {"step_s", "tokens_per_s_per_gpu", "mfu", "memory_gb", "exposed_comm_s", "bubble_s", "recompute_s"})
        console_out() << "," << (j[k].is_null() ? "" : report::fmt(j[k].get<double>()));
      console_out() << "," << report::csv_cell(j["command"].get<std::string>()) << "," << c->options.zero << ","
                    << c->layout.offload_layers << "," << report::fmt(c->timing.exposed_host_us * 1e-6) << "\n";
    }
  } else {
    write_table(top, console_out());
    if (!top.empty()) console_out() << "\nbest: " << command_of(*top.front(), a, space.seq) << "\n";
  }
  return 0;
}

struct ServePlanArgs {
  std::string model, config, gpu, dtype = "bf16", kv_cache_dtype, engine = "vllm", format = "table", cost_model_file,
      budgets, seq_limits, load = "concurrency", disaggregated, html;
};

// A configuration's short label: "XxP+YxD" for a disaggregated split (X prefill workers of P GPUs, Y
// decode workers of D), else replicas x GPUs (" dep": attention data parallel).
std::string serve_label(const plan::ServeLayout& l) {
  if (l.disaggregated())
    return std::to_string(l.prefill_workers) + "x" + std::to_string(l.prefill_tp) + "+" +
           std::to_string(l.decode_workers) + "x" + std::to_string(l.decode_tp);
  return std::to_string(l.replicas) + "x" + std::to_string(l.gpus_per_replica) + (l.attention_dp ? " dep" : "");
}

// A rate as the JSON and the command give it: requests/s, or "inf" (every request at once).
nlohmann::json rate_json(double rate) { return std::isinf(rate) ? nlohmann::json("inf") : nlohmann::json(rate); }
std::string rate_text(double rate) { return std::isinf(rate) ? "inf" : report::fmt(rate); }

nlohmann::json serve_candidate_json(const plan::ServeCandidate& c, const ServePlanArgs& a, const plan::ServeGoal& g) {
  const auto& l = c.layout;
  std::ostringstream cmd;
  cmd << "kcast serve " << (a.config.empty() ? a.model : "--config " + a.config) << " --gpu " << a.gpu << " --tp "
      << (l.attention_dp ? l.decode_gpus() : l.tp());
  if (l.pp > 1) cmd << " --pp " << l.pp;
  if (l.disaggregated())
    cmd << " --prefill-workers " << l.prefill_workers << " --prefill-tp " << l.prefill_tp << " --decode-workers "
        << l.decode_workers;
  if (l.attention_dp) cmd << " --ep " << l.ep << " --attention-dp";
  cmd << " --dtype " << a.dtype;
  if (!a.kv_cache_dtype.empty()) cmd << " --kv-cache-dtype " << a.kv_cache_dtype;
  cmd << " --engine " << a.engine << " --max-batched-tokens " << l.max_batched_tokens << " --max-num-seqs "
      << l.max_num_seqs << " --input-tokens " << g.input
      << " --output-tokens " << g.output << speculative_flags(l.speculative_tokens, g.acceptance);
  if (g.request_rate) cmd << " --request-rate " << rate_text(c.request_rate) << " --requests " << g.requests;
  else cmd << " --concurrency " << c.concurrency;
  cmd << " --format json";
  const nlohmann::json none;  // the other kind of load's keys: null
  return {{"gpus_per_replica", l.gpus_per_replica}, {"replicas", l.replicas}, {"tp", l.tp()}, {"pp", l.pp},
          {"ep", l.ep}, {"attention_dp", l.attention_dp}, {"max_batched_tokens", l.max_batched_tokens},
          {"max_num_seqs", l.max_num_seqs},
          {"speculative_tokens", l.speculative_tokens},
          {"disaggregated", l.disaggregated()},
          {"prefill_workers", l.disaggregated() ? nlohmann::json(l.prefill_workers) : none},
          {"prefill_tp", l.disaggregated() ? nlohmann::json(l.prefill_tp) : none},
          {"decode_workers", l.disaggregated() ? nlohmann::json(l.decode_workers) : none},
          {"decode_tp", l.disaggregated() ? nlohmann::json(l.decode_tp) : none},
          {"concurrency_per_replica", g.request_rate ? none : nlohmann::json(c.concurrency)},
          {"concurrency", g.request_rate ? none : nlohmann::json(c.concurrency * l.replicas)},
          {"request_rate_per_replica", g.request_rate ? rate_json(c.request_rate) : none},
          {"request_rate", g.request_rate ? rate_json(c.request_rate * double(l.replicas)) : none},
          {"output_tokens_per_s_per_gpu", c.output_tokens_per_s_per_gpu()},
          {"output_tokens_per_s", c.point.output_tokens_per_s * double(l.replicas)},
          {"requests_per_s", c.point.requests_per_s * double(l.replicas)}, {"ttft_ms", serve::stat_json(c.point.ttft_ms)},
          {"itl_ms", serve::stat_json(c.point.itl_ms)}, {"e2e_ms", serve::stat_json(c.point.e2e_ms)}, {"command", cmd.str()}};
}

int plan_serve_cmd(int argc, char** argv) {
  po::options_description opts("kcast plan serve options");
  ServePlanArgs a;
  opts.add_options()("model", po::value(&a.model), "a built-in or zoo model (positional)")(
      "config", po::value(&a.config), "Hugging Face config.json (instead of MODEL)")(
      "gpu", po::value(&a.gpu), "the GPU")("gpus", po::value<int64_t>(), "GPUs in all")(
      "input-tokens", po::value<int64_t>(), "prompt tokens per request")(
      "output-tokens", po::value<int64_t>(), "output tokens per request")(
      "slo-ttft", po::value<double>(), "time-to-first-token objective, ms")(
      "slo-itl", po::value<double>(), "inter-token latency objective, ms")(
      "percentile", po::value<int>(), "50, 90 or 99: the percentile the SLOs hold at (default 99)")(
      "engine", po::value(&a.engine)->default_value("vllm"), "vllm, sglang or trtllm")(
      "dtype", po::value(&a.dtype)->default_value("bf16"), "bf16, fp8 or fp4")(
      "kv-cache-dtype", po::value(&a.kv_cache_dtype), "the KV cache's dtype (default the model's)")(
      "max-batched-tokens", po::value(&a.budgets), "token budgets per iteration to try, B1,B2,... (default: the "
      "engine's and 2048)")("max-num-seqs", po::value(&a.seq_limits),
                               "sequence limits per iteration (per engine rank) to try, S1,S2,... (default: the "
                               "engine's and 256)")("gpus-per-node", po::value<int64_t>(), "GPUs per node (default: the GPU's scale-up domain): a replica stays in one")(
      "max-concurrency", po::value<int64_t>(), "clients per replica the search stops at (default 4096)")(
      "load", po::value(&a.load)->default_value("concurrency"),
      "the load searched per replica: concurrency (a closed loop of clients) or request-rate (Poisson "
      "arrivals, as QPS sweeps send them)")(
      "requests", po::value<int64_t>(), "requests per --load request-rate run (default 500)")(
      "disaggregated", po::value(&a.disaggregated), "on or off: also the splits of a node's GPUs into prefill "
      "and decode workers (default on)")(
      "html", po::value(&a.html), "also write the candidates shown as a self-contained page here")(
      "top", po::value<int64_t>(), "candidates shown (default 10)")("threads", po::value<unsigned>(), "worker threads")(
      "format", po::value(&a.format)->default_value("table"), "table, csv or json")(
      "cost-model", po::value(&a.cost_model_file), "the model.json to predict with");
  add_speculative_options(opts, true);
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "kcast plan serve MODEL|--config HF.json --gpu G --gpus N --input-tokens I --output-tokens O\n"
                     "       [--slo-ttft MS] [--slo-itl MS] [--percentile 50|90|99] [--engine vllm|sglang|trtllm]\n"
                     "       [--dtype DT] [--kv-cache-dtype DT] [--max-batched-tokens B1,B2,...]\n"
                     "       [--max-num-seqs S1,S2,...] [--load concurrency|request-rate] [--requests N] [--disaggregated on|off] [--top K]\n"
                     "       [--speculative-tokens K1,K2,... --acceptance A]\n"
                     "       [--format table|csv|json] [--html OUT.html]",
                     opts, pos, vm))
    return 0;
  const PlanBasics basics = plan_basics(vm, a.model, a.config, a.gpu, a.format, a.cost_model_file,
                                        {"gpu", "gpus", "input-tokens", "output-tokens"}, "plan serve");
  // Required (plan_basics checked them) or guarded by vm.count: never the fallback.
  const auto positive = [&](const char* option) { return positive_int(vm, option, 0); };
  const Format fmt = basics.fmt;
  const GpuDatabase& db = default_gpu_database();
  const GpuSpec& gpu = *basics.gpu;
  const LoadedModel& lm = basics.lm;
  plan::ServeGoal goal;
  goal.input = positive("input-tokens");
  goal.output = positive("output-tokens");
  goal.slo.ttft_ms = positive_number(vm, "slo-ttft", 0, "a positive time in ms");
  goal.slo.itl_ms = positive_number(vm, "slo-itl", 0, "a positive time in ms");
  if (vm.count("percentile")) {
    goal.percentile = vm["percentile"].as<int>();
    if (goal.percentile != 50 && goal.percentile != 90 && goal.percentile != 99)
      throw InputError("option '--percentile': 50, 90 or 99");
  }
  if (vm.count("max-concurrency")) goal.max_concurrency = positive("max-concurrency");
  if (a.load != "concurrency" && a.load != "request-rate")
    throw InputError("option '--load': concurrency or request-rate, not '" + a.load + "'");
  goal.request_rate = a.load == "request-rate";
  if (vm.count("requests")) {
    if (!goal.request_rate) throw InputError("option '--requests': only with --load request-rate");
    goal.requests = positive("requests");
  }
  if (vm.count("max-concurrency") && goal.request_rate)
    throw InputError("option '--max-concurrency': only with --load concurrency");
  const Speculative spec = speculative_from(vm, true);
  goal.acceptance = spec.acceptance;
  plan::ServeSpace space;
  space.gpus = positive("gpus");
  space.disaggregated =
      a.disaggregated.empty() || pick<bool>("disaggregated", a.disaggregated, {{"on", true}, {"off", false}});
  space.gpus_per_node = vm.count("gpus-per-node") ? positive("gpus-per-node") : domain_gpus_per_node({&gpu}, space.gpus);
  const serve::EngineConfig defaults = serve::engine_defaults(a.engine, gpu);
  space.token_budgets = a.budgets.empty() ? std::vector<int64_t>{defaults.max_batched_tokens, 2048}
                                          : parse_int_list("max-batched-tokens", a.budgets, 1, "a token count");
  // 256: vLLM V0's and trtllm-build's default sequence limit, a smaller batch beside today's defaults.
  space.seq_limits = a.seq_limits.empty() ? std::vector<int64_t>{defaults.max_num_seqs, 256}
                                          : parse_int_list("max-num-seqs", a.seq_limits, 1, "a sequence count");
  for (std::vector<int64_t>* v : {&space.token_budgets, &space.seq_limits}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  const synth::TransformerConfig cfg = transformer_of(a.model, a.config);
  space.moe = cfg.experts > 0;
  space.draft_counts = spec.tokens;
  synth::SynthOptions base;
  base.runtime = synth::Runtime::serving;
  base.serving_kernels = serve::engine_kernels(a.engine);
  base.attention = synth::AttentionImpl::flash;
  base.dtype = dtype_named("dtype", a.dtype);
  if (!a.kv_cache_dtype.empty()) base.kv_cache_dtype = dtype_named("kv-cache-dtype", a.kv_cache_dtype);
  const std::string what = a.config.empty() ? a.model : a.config;
  const serve::StepSynthesizer step = [&](const synth::SynthOptions& o, synth::Footprint* f) {
    return a.config.empty() ? synth::synthesize(a.model, o, f) : synth::synthesize_config_file(a.config, o, f);
  };
  const auto layouts = plan::enumerate_serve_layouts(space);
  if (layouts.empty()) throw InputError("plan serve: no replica size of at most " + std::to_string(space.gpus_per_node) +
                                        " GPUs divides " + std::to_string(space.gpus));
  const unsigned threads = vm.count("threads") ? vm["threads"].as<unsigned>() : 0;
  const auto all = plan::plan_serve(step, base, layouts, goal, a.engine, gpu, lm, db, what, threads);
  size_t ranked = 0, missed = 0, refused = 0;
  std::string refused_why;
  for (const auto& c : all) {
    if (c.status == plan::ServeCandidate::Status::ranked) ++ranked;
    else if (c.status == plan::ServeCandidate::Status::slo_missed) ++missed;
    else if (++refused == 1) refused_why = c.why;
  }
  // `all` holds one candidate per distinct answer: a sequence limit never reached is the larger one's.
  console_err() << "kcast plan: " << all.size() << " configurations on " << space.gpus << " x " << gpu.name << ": "
                << ranked << " ranked, " << missed << " miss the SLOs at one client, " << refused << " refused"
                << (refused_why.empty() ? "" : " (e.g. " + refused_why + ")") << "\n";
  if (ranked == 0) {
    // One line naming the closest miss: the configuration overshooting its SLOs least at one client.
    const plan::ServeCandidate* closest = nullptr;
    double closest_over = 0;
    const auto at = [&](const serve::Stat& st) { return serve::at_percentile(st, goal.percentile); };
    for (const auto& c : all) {
      if (c.status != plan::ServeCandidate::Status::slo_missed) continue;
      double over = 0;
      if (goal.slo.ttft_ms > 0) over = std::max(over, at(c.point.ttft_ms) / goal.slo.ttft_ms);
      if (goal.slo.itl_ms > 0 && !std::isnan(at(c.point.itl_ms))) over = std::max(over, at(c.point.itl_ms) / goal.slo.itl_ms);
      if (!closest || over < closest_over) closest = &c, closest_over = over;
    }
    if (closest)
      throw InputError("plan serve: no configuration meets the SLOs; the closest, " +
                       std::to_string(closest->layout.gpus_per_replica) + " GPU(s) a replica" +
                       (closest->layout.attention_dp ? " with attention-DP" : "") + ", has at one client TTFT p" +
                       std::to_string(goal.percentile) + " " + report::fixed(at(closest->point.ttft_ms), 1) +
                       " ms and ITL " + report::fixed(at(closest->point.itl_ms), 2) + " ms");
    throw InputError("plan serve: no configuration can serve it: " + refused_why);
  }
  const int64_t top_k = vm.count("top") ? vm["top"].as<int64_t>() : 10;
  nlohmann::json list = nlohmann::json::array();
  std::vector<const plan::ServeCandidate*> shown;
  for (const auto& c : all)
    if (c.status == plan::ServeCandidate::Status::ranked && int64_t(shown.size()) < top_k) {
      shown.push_back(&c);
      list.push_back(serve_candidate_json(c, a, goal));
      mark_announced(list.back(), gpu);
    }
  if (!a.html.empty()) {  // written (atomically) before anything is printed
    std::vector<std::string> labels;
    for (const plan::ServeCandidate* c : shown) labels.push_back(serve_label(c->layout));
    std::vector<plan::HtmlColumn> columns = {
        {"GPUs/replica", "gpus_per_replica"}, {"replicas", "replicas"}, {"TP", "tp"}, {"EP", "ep"},
        {"attention-DP", "attention_dp"}, {"prefill workers", "prefill_workers"}, {"prefill TP", "prefill_tp"},
        {"decode workers", "decode_workers"}, {"tokens/iter", "max_batched_tokens"}, {"max seqs", "max_num_seqs"}};
    if (spec.on()) columns.push_back({"drafts", "speculative_tokens"});
    columns.push_back({goal.request_rate ? "req/s/replica" : "clients/replica",
                       goal.request_rate ? "request_rate_per_replica" : "concurrency_per_replica", 2});
    columns.push_back({"out tok/s/GPU", "output_tokens_per_s_per_gpu"});
    const std::string page = plan::plan_html(
        "kcast plan serve: " + (a.config.empty() ? a.model : a.config),
        std::to_string(space.gpus) + " x " + gpu.name + ", " + std::to_string(goal.input) + " in / " +
            std::to_string(goal.output) + " out, " + a.engine + "; each at the highest " +
            (goal.request_rate ? "request rate" : "load") + " meeting the SLOs, best first",
        columns, list, labels, "output_tokens_per_s_per_gpu", "output tokens/s per GPU");
    write_file_atomically(a.html, [&](std::ostream& os) { os << page; });
  }
  if (fmt == Format::json) {
    console_out() << list.dump(2) << "\n";
    return 0;
  }
  const bool csv = fmt == Format::csv;
  console_out() << (csv ? "rank,gpus_per_replica,replicas,attention_dp,ep,max_batched_tokens,concurrency_per_replica,"
                          "output_tokens_per_s_per_gpu,ttft_ms,itl_ms,command,request_rate_per_replica,prefill_workers,"
                          "prefill_tp,decode_workers,decode_tp,speculative_tokens,max_num_seqs\n"
                        : std::string("rank  GPUs/replica  replicas  attn-DP  EP  tokens/iter  max seqs  ") +
                              (goal.request_rate ? "  req/s/replica" : "clients/replica") +
                              "  out tok/s/GPU  TTFT (ms)  ITL (ms)" + (space.disaggregated ? "  prefill+decode" : "") +
                              (spec.on() ? "  drafts" : "") + "\n");
  int rank = 1;
  for (size_t i = 0; i < shown.size(); ++i) {
    const nlohmann::json& j = list[i];
    const double ttft = serve::at_percentile(shown[i]->point.ttft_ms, goal.percentile);
    const double itl = std::isnan(serve::at_percentile(shown[i]->point.itl_ms, goal.percentile))
                           ? 0  // one output token: no inter-token latency
                           : serve::at_percentile(shown[i]->point.itl_ms, goal.percentile);
    if (csv) {
      console_out() << rank++ << "," << j["gpus_per_replica"] << "," << j["replicas"] << "," << j["attention_dp"] << ","
                    << j["ep"] << "," << j["max_batched_tokens"] << ","
                    << (goal.request_rate ? "" : std::to_string(shown[i]->concurrency)) << ","
                    << report::fmt(j["output_tokens_per_s_per_gpu"].get<double>()) << "," << report::fmt(ttft) << ","
                    << report::fmt(itl) << "," << report::csv_cell(j["command"].get<std::string>()) << ","
                    << (goal.request_rate ? rate_text(shown[i]->request_rate) : "");
      const plan::ServeLayout& l = shown[i]->layout;
      for (int64_t v : {l.prefill_workers, l.prefill_tp, l.decode_workers, l.decode_tp})
        console_out() << "," << (l.disaggregated() ? std::to_string(v) : "");
      console_out() << "," << l.speculative_tokens << "," << l.max_num_seqs << "\n";
    } else {
      char buf[256];
      const std::string load = goal.request_rate ? rate_text(shown[i]->request_rate) : std::to_string(shown[i]->concurrency);
      const plan::ServeLayout& l = shown[i]->layout;
      const std::string split = !space.disaggregated ? "" : l.disaggregated() ? "  " + serve_label(l) : "  -";
      const std::string drafts = spec.on() ? "  " + std::to_string(l.speculative_tokens) : "";
      std::snprintf(buf, sizeof buf, "%4d %13lld %9lld %8s %3lld %12lld %9lld %16s %14s %10s %9s%s%s\n", rank++,
                    (long long)j["gpus_per_replica"].get<int64_t>(), (long long)j["replicas"].get<int64_t>(),
                    j["attention_dp"].get<bool>() ? "yes" : "no", (long long)j["ep"].get<int64_t>(),
                    (long long)j["max_batched_tokens"].get<int64_t>(), (long long)l.max_num_seqs, load.c_str(),
                    report::fixed(j["output_tokens_per_s_per_gpu"].get<double>(), 0).c_str(),
                    report::fixed(ttft, 1).c_str(), report::fixed(itl, 2).c_str(), split.c_str(), drafts.c_str());
      console_out() << buf;
    }
  }
  if (!csv && !list.empty()) console_out() << "\nbest: " << list[0]["command"].get<std::string>() << "\n";
  return 0;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "train") return plan_train_cmd(argc - 1, argv + 1);
  if (what == "--help" || what == "-h" || what.empty()) {
    console_out() << "usage: kcast plan train MODEL --gpu G --gpus N --batch GBS --seq S [options]\n"
                     "       kcast plan serve MODEL --gpu G --gpus N --input-tokens I --output-tokens O [options]\n"
                     "       (kcast plan train --help, kcast plan serve --help for the options)\n";
    return what.empty() ? 2 : 0;
  }
  if (what == "serve") return plan_serve_cmd(argc - 1, argv + 1);
  throw InputError("plan: '" + what + "' is not one of train, serve");
}

}  // namespace kcast::cli
