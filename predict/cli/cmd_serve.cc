// `kcast serve MODEL|--config HF.json --gpu G[,G...] ...` (docs/serve.md): LLM serving under load, a
// discrete-event simulation of a continuous-batching engine (predict/serve/) whose iterations are
// timed by synth's serving-stack kernels on the cost model.
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>

#include "io/console.h"
#include "calibrate/model_file.h"
#include "io/atomic_file.h"
#include "io/gpu_database_csv.h"
#include "model/error.h"
#include "predict/cli/commands.h"
#include "predict/cli/moe_options.h"
#include "predict/cli/options.h"
#include "predict/cli/speculative_options.h"
#include "predict/serve/disaggregated.h"
#include "predict/serve/engine.h"
#include "predict/serve/iteration_cost.h"
#include "predict/serve/metrics.h"
#include "predict/serve/replica.h"
#include "predict/serve/serve_html.h"
#include "predict/serve/simulator.h"
#include "predict/serve/workload.h"
#include "predict/synth/synth.h"

namespace kcast::cli {

namespace {

using namespace kcast::serve;

struct ServeArgs {
  std::string model, config, gpus, dtype = "bf16", kv_cache_dtype, engine = "vllm", chunked_prefill, dataset,
      concurrency, request_rate, arrival = "poisson", format = "table", per_request, html, cost_model_file;
};

void add_serve_options(po::options_description& opts, ServeArgs& a) {
  opts.add_options()("model", po::value(&a.model), "a built-in or zoo model's name (positional; see kcast synth --list)")(
      "config", po::value(&a.config), "Hugging Face config.json of a decoder (instead of MODEL)")(
      "gpu", po::value(&a.gpus), "the GPUs to serve on, one simulation each: NAME[,NAME...]")(
      "tp", po::value<int64_t>(), "tensor-parallel GPUs of the one replica (default 1)")(
      "pp", po::value<int64_t>(), "pipeline stages, each --tp GPUs with 1 / pp of the layers: up to pp "
      "micro-batches in flight, a sequence in one of them (default 1)")(
      "ep", po::value<int64_t>(), "with --attention-dp: the GPUs the experts are split over (dividing --tp; "
      "default --tp)")(
      "prefill-workers", po::value<int64_t>(), "disaggregated prefill / decode: prefill workers of --prefill-tp "
      "GPUs each, the replica's --tp GPUs being one decode worker")(
      "prefill-tp", po::value<int64_t>(), "with --prefill-workers: tensor-parallel GPUs of each prefill worker "
      "(default --tp)")(
      "decode-workers", po::value<int64_t>(), "with --prefill-workers: decode workers of --tp GPUs each (default 1)")(
      "attention-dp", "attention data-parallel over the --tp GPUs (each runs its own sequences' attention; a "
      "mixture's experts split over --ep of them, tokens exchanged by all-to-all); the engine limits are per "
      "GPU, as the engines' are")(
      "moe-load-imbalance", po::value<double>(), "with --ep under --attention-dp: the rows the busiest GPU's "
      "experts receive over the mean, 1 (balanced, the default) to --ep; every MoE layer waits for that GPU")(
      "dtype", po::value(&a.dtype)->default_value("bf16"), "bf16, fp16, fp8 (FP8 checkpoints) or fp4 (NVFP4)")(
      "kv-cache-dtype", po::value(&a.kv_cache_dtype), "the KV cache's dtype (e.g. fp8; default the model's)")(
      "engine", po::value(&a.engine)->default_value("vllm"), "vllm, sglang or trtllm: the scheduler and its defaults")(
      "max-num-seqs", po::value<int64_t>(), "running sequences at most (default: the engine's)")(
      "max-batched-tokens", po::value<int64_t>(), "tokens one iteration schedules at most (default: the engine's)")(
      "chunked-prefill", po::value(&a.chunked_prefill), "on or off (default on)")(
      "block-size", po::value<int64_t>(), "KV-cache tokens per block (default: the engine's)")(
      "gpu-memory-utilization", po::value<double>(), "share of GPU memory the engine uses, 0 to 1 (default: the engine's)")(
      "input-tokens", po::value<int64_t>(), "prompt tokens of every request")(
      "output-tokens", po::value<int64_t>(), "output tokens of every request")(
      "dataset", po::value(&a.dataset), "per-request lengths (and arrival times): CSV with input_tokens,output_tokens"
      "[,arrival_s] or JSONL with those keys")(
      "concurrency", po::value(&a.concurrency), "closed loop: C clients, each sending its next request when its last "
      "finishes; a list C1,C2,... gives one load point each")(
      "request-rate", po::value(&a.request_rate), "open loop: requests per second (inf: all at once); a list R1,R2,...")(
      "arrival", po::value(&a.arrival)->default_value("poisson"), "open loop: poisson or constant spacing")(
      "requests", po::value<int64_t>(), "requests per load point (default: 10 x concurrency, at least 100; open "
      "loop 500; a dataset: its rows)")(
      "warmup-requests", po::value<int64_t>(), "the first requests sent that the latency statistics leave out "
      "(default: the concurrency in a closed loop, whose first wave arrives at once; 0 in an open loop)")(
      "seed", po::value<uint64_t>(), "seed of the Poisson arrivals (default 0)")(
      "slo-ttft", po::value<double>(), "time-to-first-token objective, ms (for goodput)")(
      "slo-itl", po::value<double>(), "inter-token latency objective, ms (for goodput)")(
      "format", po::value(&a.format)->default_value("table"), "table, csv or json")(
      "per-request", po::value(&a.per_request), "also write every request's times as CSV here")(
      "html", po::value(&a.html), "also write the throughput-latency table and curves as a self-contained page here")(
      "cost-model", po::value(&a.cost_model_file), "the model.json to predict with (default: the shipped model)");
  add_speculative_options(opts, false);
}


// The load points: --concurrency C1,... or --request-rate R1,... (or a dataset's own arrivals).
std::vector<Load> loads_from(const ServeArgs& a, bool dataset_arrivals) {
  if (!a.concurrency.empty() && !a.request_rate.empty())
    throw InputError("option '--concurrency': give either --concurrency or --request-rate");
  std::vector<Load> out;
  if (!a.concurrency.empty()) {
    for (int64_t c : parse_int_list("concurrency", a.concurrency, 1, "a client count (give C1,C2,...)")) {
      Load l;
      l.concurrency = c;
      l.label = std::to_string(c);
      out.push_back(l);
    }
    return out;
  }
  if (a.request_rate.empty()) {
    if (!dataset_arrivals)
      throw InputError("serve: give --concurrency C or --request-rate R (or a --dataset with arrival_s)");
    Load l;
    l.dataset_arrivals = true;
    l.label = "dataset";
    return {l};
  }
  const bool poisson = pick<bool>("arrival", a.arrival, {{"poisson", true}, {"constant", false}});
  size_t start = 0;
  while (start <= a.request_rate.size()) {
    const size_t end = std::min(a.request_rate.find(',', start), a.request_rate.size());
    const std::string item = a.request_rate.substr(start, end - start);
    Load l;
    l.poisson = poisson;
    l.label = item;
    if (item == "inf") {
      l.infinite_rate = true;
    } else {
      size_t used = 0;
      try {
        l.rate = std::stod(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size() || !(l.rate > 0) || !std::isfinite(l.rate))
        throw InputError("option '--request-rate': '" + item + "' is not a positive rate (requests/s) or inf");
    }
    out.push_back(l);
    start = end + 1;
  }
  return out;
}

// The engine's settings: its defaults on this GPU, then the options given.
EngineConfig engine_from(const po::variables_map& vm, const ServeArgs& a, const GpuSpec& g, const Speculative& spec) {
  EngineConfig e = engine_defaults(a.engine, g);
  e.max_num_seqs = positive_int(vm, "max-num-seqs", e.max_num_seqs);
  e.max_batched_tokens = positive_int(vm, "max-batched-tokens", e.max_batched_tokens);
  e.block_size = positive_int(vm, "block-size", e.block_size);
  if (!a.chunked_prefill.empty()) e.chunked_prefill = pick<bool>("chunked-prefill", a.chunked_prefill, {{"on", true}, {"off", false}});
  if (vm.count("gpu-memory-utilization")) {
    e.gpu_memory_utilization = vm["gpu-memory-utilization"].as<double>();
    if (!(e.gpu_memory_utilization > 0 && e.gpu_memory_utilization <= 1))
      throw InputError("option '--gpu-memory-utilization': a share from 0 to 1 (got " +
                       std::to_string(e.gpu_memory_utilization) + ")");
  }
  e.speculative_tokens = spec.tokens.front();
  e.acceptance = spec.acceptance;
  return e;
}

}  // namespace

int cmd_serve(int argc, char** argv) {
  po::options_description opts("kcast serve options");
  ServeArgs a;
  add_serve_options(opts, a);
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "kcast serve MODEL|--config HF.json --gpu G[,G...] [--tp N] [--dtype bf16|fp8|fp4]\n"
                     "       [--pp N] [--attention-dp [--ep N] [--moe-load-imbalance F]]\n"
                     "       [--kv-cache-dtype DT] [--engine vllm|sglang|trtllm] [--max-num-seqs S]\n"
                     "       [--max-batched-tokens T] [--chunked-prefill on|off] [--block-size B]\n"
                     "       [--gpu-memory-utilization F] [--prefill-workers X [--prefill-tp P] [--decode-workers Y]]\n"
                     "       [--speculative-tokens K --acceptance A]\n"
                     "       (--input-tokens I --output-tokens O | --dataset FILE)\n"
                     "       (--concurrency C[,C...] | --request-rate R[,R...] [--arrival poisson|constant])\n"
                     "       [--requests N] [--warmup-requests W] [--seed S] [--slo-ttft MS] [--slo-itl MS]\n"
                     "       [--format table|csv|json] [--per-request OUT.csv] [--html OUT.html] [--cost-model M.json]",
                     opts, pos, vm))
    return 0;
  if (a.model.empty() && a.config.empty())
    throw InputError("serve: give a MODEL (see 'kcast synth --list') or --config FILE.json");
  if (!a.model.empty() && !a.config.empty())
    throw InputError("option '--config': give either a MODEL name or --config, not both");
  if (a.gpus.empty()) throw InputError("option '--gpu': give the GPU(s) to serve on");
  const int64_t pp = positive_int(vm, "pp", 1);
  const bool attention_dp = vm.count("attention-dp") > 0;
  if (pp > 1 && attention_dp)
    throw InputError("option '--pp': not simulated with --attention-dp (its ranks step together on one stage)");
  if (vm.count("ep") && !attention_dp && positive_int(vm, "ep", 1) != 1)
    throw InputError("option '--ep': only with --attention-dp (without it a mixture's experts are split by "
                     "tensor parallelism, --tp)");
  const Format fmt = parse_format(a.format);
  const bool disaggregated = vm.count("prefill-workers") > 0;
  if (!disaggregated)
    for (const char* o : {"prefill-tp", "decode-workers"})
      if (vm.count(o)) throw InputError(std::string("option '--") + o + "': only with --prefill-workers");
  if (disaggregated && pp > 1) throw InputError("option '--prefill-workers': not simulated with --pp");
  const Speculative speculative = speculative_from(vm, false);  // checked once, before any GPU's engine takes it
  if (speculative.on() && pp > 1)
    throw InputError("option '--speculative-tokens': not simulated with --pp");
  Disaggregation dis;
  const int64_t prefill_tp = disaggregated ? positive_int(vm, "prefill-tp", positive_int(vm, "tp", 1)) : 0;
  if (disaggregated) {
    dis.prefill_workers = positive_int(vm, "prefill-workers", 1);
    dis.decode_workers = positive_int(vm, "decode-workers", 1);
  }

  // The requests.
  bool dataset_arrivals = false;
  std::vector<Request> base_reqs;
  const bool fixed = vm.count("input-tokens") || vm.count("output-tokens");
  if (fixed == !a.dataset.empty())
    throw InputError("serve: give either --input-tokens I --output-tokens O or --dataset FILE");
  if (fixed && !(vm.count("input-tokens") && vm.count("output-tokens")))
    throw InputError(std::string("option '--") + (vm.count("input-tokens") ? "output-tokens" : "input-tokens") +
                     "': give both --input-tokens and --output-tokens");
  const int64_t input_tokens = positive_int(vm, "input-tokens", 0), output_tokens = positive_int(vm, "output-tokens", 0);
  if (!a.dataset.empty()) base_reqs = read_dataset(a.dataset, &dataset_arrivals);
  const std::vector<Load> loads = loads_from(a, dataset_arrivals);
  const uint64_t seed = vm.count("seed") ? vm["seed"].as<uint64_t>() : 0;
  Slo slo;
  slo.ttft_ms = positive_number(vm, "slo-ttft", 0, "a positive time in ms");
  slo.itl_ms = positive_number(vm, "slo-itl", 0, "a positive time in ms");

  // The serving step as synth builds it.
  synth::SynthOptions base;
  base.runtime = synth::Runtime::serving;
  base.serving_kernels = serve::engine_kernels(a.engine);
  base.attention = synth::AttentionImpl::flash;
  const int64_t gpus_per_replica = positive_int(vm, "tp", 1);
  base.tp = gpus_per_replica;
  if (attention_dp) {
    // One rank per GPU, each with its own sequences; synth's data-parallel replicas with expert parallelism.
    base.tp = 1;
    base.dp = gpus_per_replica;
    base.ep = positive_int(vm, "ep", gpus_per_replica);
    if (gpus_per_replica % base.ep != 0)
      throw InputError("option '--ep': must divide --tp (" + std::to_string(gpus_per_replica) + ") under --attention-dp");
  }
  read_moe_routing_options(vm, base);  // serve defines --moe-load-imbalance only
  if (base.moe_load_imbalance != 1 && !attention_dp)
    throw InputError("option '--moe-load-imbalance': serving splits experts over GPUs only with --attention-dp "
                     "(and --ep 2 or more)");
  base.dtype = dtype_named("dtype", a.dtype);
  if (!a.kv_cache_dtype.empty()) base.kv_cache_dtype = dtype_named("kv-cache-dtype", a.kv_cache_dtype);
  const std::string what = a.config.empty() ? a.model : a.config;
  const StepSynthesizer step = [&](const synth::SynthOptions& o, synth::Footprint* f) {
    return a.config.empty() ? synth::synthesize(a.model, o, f) : synth::synthesize_config_file(a.config, o, f);
  };
  const GpuDatabase& db = default_gpu_database();
  const std::vector<const GpuSpec*> gpus = resolve_gpu_list(db, a.gpus);
  const LoadedModel& lm = model_or_default(a.cost_model_file);

  // Prefill workers: tensor parallel over their GPUs (a mixture's experts split by it too).
  synth::SynthOptions prefill_base = base;
  if (disaggregated) {
    prefill_base.tp = prefill_tp, prefill_base.dp = 1, prefill_base.ep = 1;
    prefill_base.moe_load_imbalance = 1;  // no expert-parallel group to be imbalanced over
  }
  const int64_t deployment_gpus =
      disaggregated ? dis.prefill_workers * prefill_tp + dis.decode_workers * gpus_per_replica : gpus_per_replica * pp;
  nlohmann::json inputs = {{"model", what}, {"engine", a.engine}, {"tp", gpus_per_replica}, {"pp", pp}, {"ep", base.ep},
                           {"moe_load_imbalance", base.moe_load_imbalance}, {"attention_dp", attention_dp},
                           {"dtype", a.dtype},
                           {"kv_cache_dtype", a.kv_cache_dtype.empty() ? nlohmann::json() : nlohmann::json(a.kv_cache_dtype)}};
  inputs["speculative_tokens"] = speculative.tokens.front();
  inputs["acceptance"] = speculative.on() ? nlohmann::json(speculative.acceptance) : nlohmann::json();
  inputs["disaggregated"] =
      disaggregated ? nlohmann::json{{"prefill_workers", dis.prefill_workers}, {"prefill_tp", prefill_tp},
                                     {"decode_workers", dis.decode_workers}, {"decode_tp", gpus_per_replica},
                                     {"gpus", deployment_gpus}}
                    : nlohmann::json();
  if (fixed) {
    inputs["input_tokens"] = input_tokens;
    inputs["output_tokens"] = output_tokens;
  } else {
    inputs["dataset"] = a.dataset;
  }
  std::vector<std::pair<LoadPoint, SimResult>> runs;
  nlohmann::json list = nlohmann::json::array();
  std::string first_refusal;
  for (const GpuSpec* g : gpus) {
    Replica replica, prefill;
    try {
      EngineConfig per_rank = engine_from(vm, a, *g, speculative);
      per_rank.pipeline_stages = pp;
      replica = make_replica(step, base, *g, lm, db, per_rank, what);
      if (disaggregated) {
        try {
          prefill = make_replica(step, prefill_base, *g, lm, db, engine_from(vm, a, *g, speculative), what);
        } catch (const InputError& e) {  // say which worker: the messages speak of --tp
          throw InputError("option '--prefill-tp': a prefill worker of " + std::to_string(prefill_tp) + " GPU(s): " +
                           e.what());
        }
        dis.link_gbps = kv_link_gbps(*g, deployment_gpus);
      }
    } catch (const InputError& e) {
      // With several GPUs (--gpu all), one the model does not fit is skipped with its reason; with
      // one, or when none is left, the run fails with it.
      if (gpus.size() == 1) throw;
      console_err() << "kcast serve: " << g->name << " skipped: " << e.what() << "\n";
      if (first_refusal.empty()) first_refusal = e.what();
      continue;
    }
    const EngineConfig& per_rank = replica.per_rank;
    const EngineConfig& e = replica.engine;
    const int64_t blocks = replica.blocks;
    CostTimer timer(*replica.cost);
    for (const Load& l : loads) {
      std::vector<Request> reqs = base_reqs;
      if (fixed) {
        const int64_t n = positive_int(vm, "requests", l.concurrency > 0 ? std::max<int64_t>(100, 10 * l.concurrency) : 500);
        reqs = fixed_requests(n, input_tokens, output_tokens);
      } else if (vm.count("requests")) {
        reqs.resize(std::min(reqs.size(), size_t(positive_int(vm, "requests", 1))));
      }
      check_fits_one_rank(replica, reqs);
      assign_arrivals(reqs, l, seed);
      SimResult r = disaggregated ? simulate_disaggregated(reqs, l, prefill, replica, dis) : simulate(reqs, l, e, blocks, timer);
      int64_t warmup = l.concurrency;
      if (vm.count("warmup-requests")) {
        warmup = vm["warmup-requests"].as<int64_t>();
        if (warmup < 0 || warmup >= int64_t(reqs.size()))
          throw InputError("option '--warmup-requests': from 0 to one less than the requests (" +
                           std::to_string(reqs.size()) + ")");
      }
      LoadPoint p = summarize(r, g->name, l, slo, blocks, e.block_size, warmup);
      nlohmann::json j = inputs;
      j["max_num_seqs"] = per_rank.max_num_seqs;
      j["max_batched_tokens"] = per_rank.max_batched_tokens;
      j["chunked_prefill"] = e.chunked_prefill;
      j["block_size"] = e.block_size;
      j["gpu_memory_utilization"] = e.gpu_memory_utilization;
      mark_announced(j, *g);
      list.push_back(load_point_json(p, slo, j));
      runs.emplace_back(std::move(p), std::move(r));
    }
  }
  if (runs.empty()) throw InputError(first_refusal + " (and on every other --gpu)");
  std::vector<LoadPoint> pts;
  for (const auto& run : runs) pts.push_back(run.first);
  // The files before the report: a file that cannot be written fails the run before anything is printed,
  // and replaces nothing unless both are written.
  StagedOutputs outs;
  if (!a.per_request.empty()) outs.stage(a.per_request, [&](std::ostream& os) { write_per_request(runs, os); });
  if (!a.html.empty()) outs.stage(a.html, [&](std::ostream& os) { os << serve_html(pts, slo, what); });
  outs.commit();
  if (fmt == Format::json) console_out() << (list.size() == 1 ? list[0] : list).dump(2) << "\n";
  else if (fmt == Format::csv) write_csv(pts, console_out());
  else write_table(pts, console_out());
  return 0;
}

}  // namespace kcast::cli
