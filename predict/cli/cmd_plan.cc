// `kcast plan train MODEL --gpu G --gpus N --batch GBS --seq S ...` (docs/plan.md): the best parallel
// layouts for a training run, each predicted as `kcast synth --mode train --gpu` predicts it.
#include <iostream>
#include <sstream>

#include "calibrate/model_file.h"
#include "io/atomic_file.h"
#include "io/console.h"
#include "io/gpu_database_csv.h"
#include "model/error.h"
#include "predict/cli/commands.h"
#include "predict/cli/options.h"
#include "predict/plan/plan_train.h"
#include "predict/report/text_util.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer/recipe.h"
#include "predict/synth/transformer_config.h"

namespace kcast::cli {

namespace {

using plan::TrainCandidate;

struct PlanArgs {
  std::string what, model, config, gpu, dtype = "bf16", recipe, framework = "megatron", fix, format = "table",
      cost_model_file;
};

const char* framework_name(synth::Framework f) {
  return f == synth::Framework::megatron     ? "megatron"
         : f == synth::Framework::torchtitan ? "torchtitan"
         : f == synth::Framework::automodel  ? "automodel"
                                             : "eager";
}

// The `kcast synth` command line that reproduces a candidate's figures.
std::string command_of(const TrainCandidate& c, const PlanArgs& a, int64_t seq) {
  const synth::SynthOptions& o = c.options;
  std::ostringstream s;
  s << "kcast synth " << (a.config.empty() ? a.model : "--config " + a.config) << " --mode train --batch " << o.batch
    << " --seq " << seq << " --dtype " << a.dtype;
  if (o.recipe != synth::Recipe::none) s << " --recipe " << synth::transformer::to_string(o.recipe);
  s << " --framework " << framework_name(o.framework) << " --attention flash --master-weights";
  if (o.compile) s << " --compile";
  s << " --zero " << o.zero << " --tp " << o.tp << " --pp " << o.pp << " --cp " << o.cp << " --dp " << o.dp;
  if (o.ep > 1) s << " --ep " << o.ep;
  if (o.virtual_stages > 1) s << " --virtual-stages " << o.virtual_stages;
  s << " --microbatches " << o.microbatches;
  if (o.sequence_parallel) s << " --sequence-parallel";
  if (c.layout.recompute != plan::Recompute::none) s << " --recompute " << plan::to_string(c.layout.recompute);
  if (o.gpus_per_node != 8) s << " --gpus-per-node " << o.gpus_per_node;
  s << " --gpu " << a.gpu << " --format json -o /dev/null";
  return s.str();
}

nlohmann::json candidate_json(const TrainCandidate& c, const PlanArgs& a, int64_t seq) {
  const auto& l = c.layout;
  nlohmann::json j = {{"tp", l.tp}, {"pp", l.pp}, {"cp", l.cp}, {"ep", l.ep}, {"dp", l.dp}, {"vp", l.vp},
                      {"microbatches", l.microbatches}, {"micro_batch_size", l.mbs},
                      {"recompute", plan::to_string(l.recompute)}};
  j.update(step_json_of(c.timing, c.fit, c.options));
  j["command"] = command_of(c, a, seq);
  return j;
}

void write_table(const std::vector<const TrainCandidate*>& top, std::ostream& os) {
  using report::fixed;
  os << "rank  tp pp cp ep   dp vp  mbs  micro  recompute   step (s)  tokens/s/GPU   MFU  memory GB  exposed comm  bubble  recompute s\n";
  int rank = 1;
  for (const TrainCandidate* c : top) {
    const auto& l = c->layout;
    const auto& t = c->timing;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%4d %3lld %2lld %2lld %2lld %4lld %2lld %4lld %6lld  %-9s %9s %13s %5s %10s %13s %7s %12s\n",
                  rank++, (long long)l.tp, (long long)l.pp, (long long)l.cp, (long long)l.ep, (long long)l.dp,
                  (long long)l.vp, (long long)l.mbs, (long long)l.microbatches, plan::to_string(l.recompute),
                  fixed(t.step_us * 1e-6, 3).c_str(), fixed(t.tokens_per_s_per_gpu(), 0).c_str(),
                  known(t.mfu) ? (fixed(t.mfu * 100, 1) + "%").c_str() : "-", fixed(c->fit.need_bytes * 1e-9, 1).c_str(),
                  fixed(t.exposed_comm_us * 1e-6, 3).c_str(), fixed(t.bubble_us * 1e-6, 3).c_str(),
                  fixed(t.recompute_us * 1e-6, 3).c_str());
    os << buf;
  }
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
      "gpus-per-node", po::value<int64_t>(), "GPUs per node (default 8): tensor parallelism stays within one")(
      "memory-fraction", po::value<double>(), "the share of GPU memory a layout may fill (default 0.9: the rest "
      "goes to the CUDA context, NCCL buffers, workspaces and fragmentation)")(
      "fix", po::value(&a.fix), "hold some of the layout: tp=8,pp=4,cp=1,ep=8,dp=..,vp=..,mbs=..,microbatches=..,"
      "recompute=none|selective|full")("top", po::value<int64_t>(), "candidates shown (default 10)")(
      "threads", po::value<unsigned>(), "worker threads (default: all cores)")(
      "format", po::value(&a.format)->default_value("table"), "table, csv or json")(
      "cost-model", po::value(&a.cost_model_file), "the model.json to predict with (default: the shipped model)");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "kcast plan train MODEL|--config HF.json --gpu G --gpus N --batch GBS --seq S\n"
                     "       [--dtype bf16|fp8|fp4] [--recipe R] [--framework megatron|torchtitan|automodel] [--compile]\n"
                     "       [--fix tp=8,...] [--memory-fraction F] [--top K] [--format table|csv|json] [--threads N]\n"
                     "       [--cost-model M.json]",
                     opts, pos, vm))
    return 0;
  if (a.model.empty() == a.config.empty()) throw InputError("plan train: give a MODEL or --config FILE.json");
  for (const char* required : {"gpu", "gpus", "batch", "seq"})
    if (!vm.count(required)) throw InputError(std::string("option '--") + required + "': required");
  auto positive = [&](const char* option) {
    const int64_t v = vm[option].as<int64_t>();
    if (v <= 0 || v > (int64_t(1) << 24))
      throw InputError(std::string("option '--") + option + "': a positive integer up to 16777216");
    return v;
  };
  const Format fmt = parse_format(a.format);
  const GpuDatabase& db = default_gpu_database();
  const GpuSpec& gpu = db.resolve(a.gpu);
  const LoadedModel lm = model_or_default(a.cost_model_file);

  const synth::TransformerConfig cfg = [&] {
    if (!a.config.empty()) return synth::read_hf_config(a.config);
    if (const auto* b = synth::find_builtin_transformer(a.model)) return *b;
    if (auto z = synth::zoo_config(a.model)) return *z;
    throw InputError("plan train: '" + a.model + "' is not a transformer kcast synthesizes (see kcast synth --list)");
  }();
  plan::LayoutSpace space;
  space.gpus = positive("gpus");
  space.batch = positive("batch");
  space.seq = positive("seq");
  space.layers = cfg.layers;
  space.heads = cfg.heads;
  space.kv_heads = cfg.kv_heads;
  space.experts = cfg.experts;
  if (vm.count("gpus-per-node")) space.gpus_per_node = positive("gpus-per-node");
  if (!a.fix.empty()) space.fixed = plan::parse_fix(a.fix);
  const std::vector<plan::TrainLayout> layouts = plan::enumerate_train_layouts(space);
  if (layouts.empty())
    throw InputError("plan train: no layout of " + std::to_string(space.gpus) + " GPUs divides the batch of " +
                     std::to_string(space.batch) + (a.fix.empty() ? "" : " with --fix " + a.fix));

  synth::SynthOptions base;
  base.seq = space.seq;
  base.dtype = dtype_named("dtype", a.dtype);
  base.attention = synth::AttentionImpl::flash;
  base.master_weights = true;
  base.gpus_per_node = space.gpus_per_node;
  base.framework = pick<synth::Framework>("framework", a.framework,
                                          {{"megatron", synth::Framework::megatron},
                                           {"torchtitan", synth::Framework::torchtitan},
                                           {"automodel", synth::Framework::automodel}});
  base.zero = base.framework == synth::Framework::megatron ? 1 : 3;  // distributed optimizer / FSDP
  base.compile = vm.count("compile") > 0;
  if (!a.recipe.empty()) {
    const auto r = synth::transformer::parse_recipe(a.recipe);
    if (!r) throw InputError("option '--recipe': '" + a.recipe + "' is not one of delayed, current, mxfp8, block, nvfp4");
    base.recipe = *r;
  } else if (base.dtype == DType::fp8) {
    base.recipe = synth::Recipe::delayed;
  } else if (base.dtype == DType::fp4) {
    base.recipe = synth::Recipe::nvfp4;
  }
  check_recipe_units(base, {&gpu});
  const plan::StepSynthesizer step = [&](const synth::SynthOptions& o, synth::Footprint* f) {
    return a.config.empty() ? synth::synthesize(a.model, o, f) : synth::synthesize_config_file(a.config, o, f);
  };
  const unsigned threads = vm.count("threads") ? vm["threads"].as<unsigned>() : 0;
  const double fraction = vm.count("memory-fraction") ? vm["memory-fraction"].as<double>() : 0.9;
  if (!(fraction > 0 && fraction <= 1)) throw InputError("option '--memory-fraction': a share from 0 to 1");
  const std::vector<TrainCandidate> all =
      plan::plan_train(step, base, layouts, space.batch, gpu, lm, db, threads, fraction);

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
  const int64_t top_k = vm.count("top") ? vm["top"].as<int64_t>() : 10;
  if (top_k <= 0) throw InputError("option '--top': a positive count");
  std::vector<const TrainCandidate*> top;
  for (const TrainCandidate& c : all)
    if (c.status == TrainCandidate::Status::ranked && int64_t(top.size()) < top_k) top.push_back(&c);
  if (fmt == Format::json) {
    nlohmann::json list = nlohmann::json::array();
    for (const TrainCandidate* c : top) list.push_back(candidate_json(*c, a, space.seq));
    console_out() << list.dump(2) << "\n";
  } else if (fmt == Format::csv) {
    console_out() << "rank,tp,pp,cp,ep,dp,vp,microbatches,micro_batch_size,recompute,step_s,tokens_per_s_per_gpu,mfu,"
                     "memory_gb,exposed_comm_s,bubble_s,recompute_s,command\n";
    int rank = 1;
    for (const TrainCandidate* c : top) {
      const nlohmann::json j = candidate_json(*c, a, space.seq);
      console_out() << rank++;
      for (const char* k : {"tp", "pp", "cp", "ep", "dp", "vp", "microbatches", "micro_batch_size"}) console_out() << "," << j[k];
      console_out() << "," << plan::to_string(c->layout.recompute);
      for (const char* k : {"step_s", "tokens_per_s_per_gpu", "mfu", "memory_gb", "exposed_comm_s", "bubble_s", "recompute_s"})
        console_out() << "," << (j[k].is_null() ? "" : report::fmt(j[k].get<double>()));
      console_out() << "," << report::csv_cell(j["command"].get<std::string>()) << "\n";
    }
  } else {
    write_table(top, console_out());
    if (!top.empty()) console_out() << "\nbest: " << command_of(*top.front(), a, space.seq) << "\n";
  }
  return 0;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "train") return plan_train_cmd(argc - 1, argv + 1);
  if (what == "--help" || what == "-h" || what.empty()) {
    console_out() << "usage: kcast plan train MODEL --gpu G --gpus N --batch GBS --seq S [options]\n"
                     "       (kcast plan train --help for the options; `plan serve` is not available yet)\n";
    return what.empty() ? 2 : 0;
  }
  if (what == "serve") throw InputError("plan serve: not available yet (plan train is)");
  throw InputError("plan: '" + what + "' is not one of train, serve");
}

}  // namespace kcast::cli
