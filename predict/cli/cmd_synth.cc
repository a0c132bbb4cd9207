// `kcast synth MODEL [options]` (docs/cli-contract.md): the kernel list PyTorch eager launches for one step of a
// built-in model or a Hugging Face config.json, written as a kcast-csv kernel list.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <utility>

#include "io/console.h"
#include "io/gpu_database_csv.h"
#include "io/kernel_list_csv.h"
#include "io/atomic_file.h"
#include "calibrate/model_file.h"
#include "model/error.h"
#include "predict/cli/commands.h"
#include "predict/cli/measurement_context.h"
#include "predict/cli/moe_options.h"
#include "predict/cli/options.h"
#include "predict/cli/synth_batch_sweep.h"
#include "predict/cli/synth_memory_report.h"
#include "predict/cli/synth_time_report.h"
#include "predict/synth/pipeline_layout.h"
#include "predict/synth/cuda_graph_modules.h"
#include "predict/synth/recompute_modules.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer/moe_dispatch.h"
#include "predict/synth/transformer/recipe.h"

namespace kcast::cli {

namespace {

using namespace kcast::synth;

// 0 when not given: the model's default.
int64_t positive(const po::variables_map& vm, const char* option) { return positive_int(vm, option, 0); }


}  // namespace

// The string-valued options of `kcast synth`, as given (the numbers stay in the variables map).
struct SynthArgs {
  std::string model, mode = "infer", dtype, attention = "eager", runtime = "eager", optimizer = "adam", head = "auto",
      config, out, gpus, recompute = "none", memory_json, cost_model_file, batch_sweep, format, html, recipe,
      framework = "eager", pp_layout, context, moe_dispatcher = "alltoall", recompute_modules, cuda_graph_modules;
};

// The option table (its help text is the per-flag reference `kcast synth --help` prints).
void add_synth_options(po::options_description& opts, SynthArgs& a) {
  opts.add_options()("model", po::value(&a.model), "a built-in or zoo model's name (positional; see --list)")(
      "list", "list the built-in and zoo models")("batch", po::value<int64_t>(), "batch size (default 1)")(
      "seq", po::value<int64_t>(), "sequence length; decode: the context each new token attends to (default: the "
      "model's context; BERT 512)")(
      "mode", po::value(&a.mode)->default_value("infer"),
      "infer (forward), train (forward + backward + optimizer step) or decode (one generated token per "
      "sequence against a KV cache of --seq tokens) or generate (a prompt of --seq tokens, then --new-tokens "
      "decode steps)")(
      "new-tokens", po::value<int64_t>(), "generate: tokens to generate per sequence after the prompt")(
      "kv-cache-dtype", po::value<std::string>(), "decode / generate with --attention flash: the KV cache's "
      "dtype (fp8, fp4, bf16, fp16; default the model's), as serving stacks quantize it")(
      "decode-tokens", po::value<int64_t>(), "decode: tokens each sequence runs this step against its cache "
      "(default 1; 1 + k verifies k draft tokens of speculative decoding)")(
      "dtype", po::value(&a.dtype), "fp32, tf32, fp16, bf16, fp8 or fp4 (transformer inference: FP8 / NVFP4 projections) (default: bf16 for llama models, fp32 otherwise)")(
      "attention", po::value(&a.attention)->default_value("eager"), "eager (bmm + softmax) or flash (one fused kernel); flash by default with --framework megatron, "
      "torchtitan or automodel")(
      "runtime", po::value(&a.runtime)->default_value("eager"), "inference: eager (PyTorch as Hugging Face's code runs "
      "it) or serving (vLLM / SGLang kernels: fused norms, rotary and activation, merged projections, paged KV "
      "cache, fused attention and MoE, logits of the sampled tokens only)")(
      "optimizer", po::value(&a.optimizer)->default_value("adam"), "adam, adamw, sgd or none: the optimizer step of --mode train (PyTorch foreach kernels; ignored for infer)")(
      "head", po::value(&a.head)->default_value("auto"),
      "auto, lm, classifier, pretraining or none (auto: LM for decoders; BERT: classifier in infer, "
      "pretraining in train)")("no-loss", "train: leave out the loss and its backward")(
      "recompute", po::value(&a.recompute)->default_value("none"),
      "none, selective or full: train with activation recomputation (full: each layer keeps its input and "
      "its forward runs again before its backward; selective: eager attention keeps no scores, its core "
      "runs again)")(
      "recompute-modules", po::value(&a.recompute_modules),
      "train, --framework megatron: Megatron-LM's selective recomputation by module, its names comma-separated "
      "(core_attn, layernorm, mla_up_proj, mlp, moe_act, shared_experts), as --recompute-modules takes them there: "
      "each module keeps nothing of its own and runs again before its backward (implies --recompute selective)")(
      "recompute-layers", po::value<int64_t>(),
      "train, --framework megatron, --recompute full: Megatron-LM's block method (--recompute-method block "
      "--recompute-num-layers N), only the first N layers of each pipeline chunk recomputed")(
      "cpu-offload-layers", po::value<int64_t>(),
      "train, --framework megatron, one pipeline stage, no recomputation: Megatron-LM's CPU activation "
      "offloading (--cpu-offloading-num-layers N): N layers' activations copied to host memory in the forward "
      "and back in the backward, over the GPU's host link, behind the other layers' compute")(
      "master-weights", "train with a 16-bit --dtype in mixed precision: fp32 master weights and Adam state "
      "(12 bytes per parameter) beside the 16-bit weights and gradients")(
      "config", po::value(&a.config), "Hugging Face config.json of a transformer (instead of MODEL)")(
      "layers", po::value<int64_t>(), "override the number of layers")(
      "hidden", po::value<int64_t>(), "override the hidden size")("heads", po::value<int64_t>(), "override the attention heads")(
      "kv-heads", po::value<int64_t>(), "override the key/value heads")("ffn", po::value<int64_t>(), "override the MLP size")(
      "vocab", po::value<int64_t>(), "override the vocabulary size")(
      "tp", po::value<int64_t>(), "tensor-parallel GPUs (Megatron-LM: heads, MLP and vocabulary split; default 1)")(
      "pp", po::value<int64_t>(), "pipeline stages (layers / pp per GPU; default 1)")(
      "dp", po::value<int64_t>(), "data-parallel replicas: each runs batch / dp, gradients all-reduced (default 1)")(
      "cp", po::value<int64_t>(), "context-parallel GPUs (Megatron-LM's ring attention: seq / cp tokens of each "
      "sequence per GPU; --attention flash; default 1)")(
      "ep", po::value<int64_t>(), "expert-parallel GPUs (mixtures of experts: experts / ep per GPU, tokens "
      "exchanged by all-to-all; ep divides dp; default 1)")(
      "etp", po::value<int64_t>(), "train with --ep: expert tensor parallelism, 1 (whole experts; the expert-parallel "
      "group folds over the tensor-parallel ranks, as Megatron-Bridge's MoE recipes set it) or --tp (experts split "
      "as the dense MLP); default --tp where --ep divides --dp")(
      "mtp-layers", po::value<int64_t>(), "train: multi-token prediction depths (Megatron-Core's --mtp-num-layers, "
      "DeepSeek-V3's MTP): each an embedding, two norms, a projection, one more layer, the shared head and its loss, "
      "per micro-batch on the last stage")(
      "moe-dispatcher", po::value(&a.moe_dispatcher)->default_value("alltoall"), "with --ep: how the routed "
      "tokens reach their experts' GPUs: alltoall (NCCL, every token-expert pair), deepep or hybridep (each token "
      "once per GPU and once per node holding its experts) or allgather (every GPU gathers the group's tokens)")(
      "fp8-param-gather", "train, --framework megatron, an FP8 --recipe: Megatron's FP8 parameters (--fp8-param-gather; "
      "Megatron-Bridge's delayed, current and MXFP8 recipes set it): the block weights held as their FP8 copies "
      "only, no BF16 copy (memory; the parameter all-gather is still counted in 16 bits)")(
      "moe-a2a-overlap", "train, --framework megatron: Megatron-Core's EP overlap (--overlap-moe-expert-parallel-comm): "
      "the dispatch and combine run behind the other micro-batch's compute")(
      "moe-expert-capacity-factor", po::value<double>(), "train, --framework megatron, alltoall or allgather "
      "dispatcher: Megatron-Core's token dropping: each expert takes at most ceil(F x tokens x top-k / experts) of a "
      "GPU's routed rows (default: dropless)")(
      "moe-pad-expert-input-to-capacity", "with --moe-expert-capacity-factor: every expert's rows padded to the "
      "capacity (Megatron-Bridge's token-drop runs): fixed shapes, no host read of the tokens per expert")(
      "moe-load-imbalance", po::value<double>(), "with --ep: the rows the busiest expert-parallel GPU receives over "
      "the mean, 1 (balanced, the default: the published runs force it) to --ep; every MoE layer waits for that GPU")(
      "virtual-stages", po::value<int64_t>(), "with --pp: layer chunks per pipeline GPU (Megatron-LM's interleaved "
      "1F1B; micro-batches divisible by --pp)")(
      "sequence-parallel", "with --tp: Megatron-LM's sequence parallelism (norms, dropouts and residual adds on "
      "seq / tp tokens; all-gathers and reduce-scatters instead of all-reduces)")(
      "zero", po::value<int>(), "train: ZeRO stage over the --dp replicas (1: optimizer state sharded; 2: and "
      "gradients; 3: and parameters, i.e. FSDP full sharding; default 0, plain DDP)")(
      "gpus-per-node", po::value<int64_t>(), "GPUs per node (default: the --gpu's scale-up domain, `kcast gpus NAME`; 8 without --gpu): collectives whose group spans nodes send "
      "part of their bytes through the NICs (the kernel list's net_bytes), ranks placed tensor-parallel innermost, "
      "then data / expert parallel, then pipeline stages")(
      "microbatches", po::value<int64_t>(), "micro-batches per replica and step (pipeline schedule or gradient "
      "accumulation; default 1)")(
      "output,o", po::value(&a.out), "write the kernel list here (atomically) instead of stdout")(
      "gpu", po::value(&a.gpus), "also say whether the step's memory fits on these GPUs and predict its time there "
      "(as 'kcast predict --mode absolute' predicts the list; with tokens/s, MFU, a generation's time to first "
      "and per output token, a decode's MBU): NAME[,NAME...]")(
      "cost-model", po::value(&a.cost_model_file),
      "with --gpu: the model.json to predict with (default: the shipped model)")(
      "cuda-graph", "with --gpu: predict the step replayed as CUDA graphs (as serving stacks replay decode steps)")(
      "cuda-graph-modules", po::value(&a.cuda_graph_modules), "train, --framework megatron: Megatron-LM's per-layer "
      "CUDA graphs (--cuda-graph-impl transformer_engine --cuda-graph-modules; Megatron-Bridge's cuda_graph_scope): "
      "attn, mlp, moe_router, moe_preprocess, each issued as one launch a direction (the host's issue, with --gpu)")(
      "context", po::value(&a.context),
      "with --gpu: predict the step as this measurement setup timed it, its per-op framework floors added "
      "(neusight: each op timed alone with CUDA events, as NeuSight's labels are); the list's rows name it")(
      "batch-sweep", po::value(&a.batch_sweep), "with --gpu: instead of a kernel list, a table of the step at each of "
      "these global batches B1,B2,... on each GPU: memory verdict, step, time to first / per output token, "
      "tokens/s, MFU, MBU")(
      "format", po::value(&a.format), "with --batch-sweep: table (default), csv or json; without it, json prints "
      "the predicted step of each --gpu (the kernel list then goes to -o only)")(
      "html", po::value(&a.html), "with --batch-sweep: also write the sweep as a self-contained HTML page here")(
      "acceptance", po::value<double>(), "with --gpu and --decode-tokens Q > 1: the drafts' acceptance rate "
      "(0 to 1), for the tokens a speculative step yields ((1 - a^Q) / (1 - a) a sequence) and their rate")(
      "memory-json", po::value(&a.memory_json), "also write the memory report (and each --gpu's fit) as JSON here")(
      "recipe", po::value(&a.recipe), "train with --dtype fp8: delayed (Transformer Engine's default), current, "
      "mxfp8 (Blackwell) or block (DeepSeek-style 1x128 / 128x128 scales); with --dtype fp4: nvfp4 (Blackwell). "
      "The block layers' GEMMs run narrow, with their quantization kernels; default delayed / nvfp4")(
      "framework", po::value(&a.framework)->default_value("eager"), "train: eager (PyTorch as HF's code runs "
      "it), megatron (Megatron-LM / NeMo with Transformer Engine: fused kernels, distributed optimizer, "
      "communication overlapped with compute), torchtitan or automodel (FSDP2, prefetched all-gathers)")(
      "compile", "torchtitan / automodel: torch.compile's fused element-wise kernels (norms, RoPE, SwiGLU, loss)")(
      "pp-layout", po::value(&a.pp_layout), "layers per pipeline stage (per virtual stage when interleaved), "
      "comma-separated: L1,L2,...; default layers / stages each");
}

// The step's SynthOptions from the command line; every bad value an error naming its option.
SynthOptions synth_options_from(const po::variables_map& vm, const SynthArgs& a) {
  SynthOptions o;
  o.batch = positive(vm, "batch");
  o.seq = positive(vm, "seq");
  o.layers = positive(vm, "layers");
  o.hidden = positive(vm, "hidden");
  o.heads = positive(vm, "heads");
  o.kv_heads = positive(vm, "kv-heads");
  o.ffn = positive(vm, "ffn");
  o.vocab = positive(vm, "vocab");
  for (auto [option, degree] : {std::pair{"tp", &o.tp}, std::pair{"pp", &o.pp}, std::pair{"dp", &o.dp},
                                std::pair{"ep", &o.ep}, std::pair{"cp", &o.cp},
                                std::pair{"microbatches", &o.microbatches},
                                std::pair{"virtual-stages", &o.virtual_stages},
                                std::pair{"gpus-per-node", &o.gpus_per_node}, std::pair{"etp", &o.etp}, std::pair{"mtp-layers", &o.mtp_layers}})
    if (vm.count(option)) *degree = positive(vm, option);
  o.mode = pick<Mode>("mode", a.mode,
                      {{"infer", Mode::infer},
                       {"inference", Mode::infer},
                       {"train", Mode::train},
                       {"decode", Mode::decode},
                       {"generate", Mode::generate}});
  o.new_tokens = positive(vm, "new-tokens");
  if (vm.count("decode-tokens")) o.decode_tokens = positive(vm, "decode-tokens");
  if (o.new_tokens && o.mode != Mode::generate)
    throw InputError("option '--new-tokens': only with --mode generate");
  o.attention = pick<AttentionImpl>("attention", a.attention, {{"eager", AttentionImpl::eager}, {"flash", AttentionImpl::flash}});
  o.runtime = pick<Runtime>("runtime", a.runtime, {{"eager", Runtime::eager}, {"serving", Runtime::serving}});
  o.optimizer = pick<Optimizer>("optimizer", a.optimizer,
                                {{"adam", Optimizer::adam},
                                 {"adamw", Optimizer::adamw},
                                 {"sgd", Optimizer::sgd},
                                 {"none", Optimizer::none}});
  o.head = pick<HeadKind>("head", a.head,
                          {{"auto", HeadKind::automatic},
                           {"lm", HeadKind::lm},
                           {"classifier", HeadKind::classifier},
                           {"pretraining", HeadKind::pretraining},
                           {"none", HeadKind::none}});
  o.loss = !vm.count("no-loss");
  if (vm.count("zero")) o.zero = vm["zero"].as<int>();
  o.sequence_parallel = vm.count("sequence-parallel") > 0;
  o.master_weights = vm.count("master-weights") > 0;
  enum class Recompute { none, selective, full };
  const Recompute r = pick<Recompute>("recompute", a.recompute,
                                      {{"none", Recompute::none}, {"selective", Recompute::selective},
                                       {"full", Recompute::full}});
  o.recompute = r == Recompute::full;
  o.selective_recompute = r == Recompute::selective;
  if (vm.count("recompute-layers")) o.recompute_layers = positive_int(vm, "recompute-layers", 1);
  // 0, as Megatron's default, offloads nothing.
  if (vm.count("cpu-offload-layers") && vm["cpu-offload-layers"].as<int64_t>() != 0)
    o.cpu_offload_layers = positive_int(vm, "cpu-offload-layers", 1);
  if (vm.count("recompute-modules")) {
    // Megatron: the list replaces selective's default (core_attn); it is selective granularity (with
    // --recompute full, synth's checks refuse it).
    synth::set_recompute_modules(o, synth::parse_recompute_modules("recompute-modules", a.recompute_modules));
  }
  if (vm.count("cuda-graph-modules"))
    o.cuda_graph_modules = synth::parse_cuda_graph_modules("cuda-graph-modules", a.cuda_graph_modules);
  if (vm.count("kv-cache-dtype"))
    o.kv_cache_dtype = dtype_named("kv-cache-dtype", vm["kv-cache-dtype"].as<std::string>());
  if (!a.dtype.empty()) o.dtype = dtype_named("dtype", a.dtype);
  o.recipe = transformer::recipe_option(a.recipe, o.mode == Mode::train, o.dtype);
  o.framework = pick<Framework>("framework", a.framework,
                                {{"eager", Framework::eager},
                                 {"megatron", Framework::megatron},
                                 {"torchtitan", Framework::torchtitan},
                                 {"automodel", Framework::automodel}});
  // Megatron-LM (Transformer Engine's fused attention), torchtitan and AutoModel (SDPA) never run
  // attention as bmm + softmax: left unsaid, theirs is the fused kernel.
  if (vm["attention"].defaulted() && o.framework != Framework::eager) o.attention = AttentionImpl::flash;
  o.compile = vm.count("compile") > 0;
  o.moe_dispatcher = transformer::moe_dispatcher_option(a.moe_dispatcher);
  o.moe_a2a_overlap = vm.count("moe-a2a-overlap") > 0;
  read_moe_routing_options(vm, o);
  o.fp8_param_gather = vm.count("fp8-param-gather") > 0;
  if (!a.pp_layout.empty() && is_megatron_layout(a.pp_layout)) {
    // Megatron's own layout string, as the recipe launched it: its 't' per chunk, its 'm' the MTP depths.
    const MegatronLayout l = parse_megatron_layout(a.pp_layout, "pp-layout");
    o.pp_layout = l.layers;
    o.pp_layout_mtp_chunk = l.mtp_chunk;
    if (l.mtp > 0 && o.mtp_layers == 0) o.mtp_layers = l.mtp;
    if (l.mtp > 0 && o.mtp_layers != l.mtp)
      throw InputError("option '--mtp-layers': " + std::to_string(o.mtp_layers) + " depths, but --pp-layout holds " +
                       std::to_string(l.mtp));
  } else if (!a.pp_layout.empty()) {
    o.pp_layout = parse_int_list("pp-layout", a.pp_layout, 0, "a layer count (give L1,L2,... per stage)");
  }

  return o;
}

// --batch-sweep: the step at each global batch on each GPU, as a table (and an HTML page) instead of a
// kernel list.
void print_batch_sweep(const StepSynthesizer& step, const SynthOptions& o, const po::variables_map& vm,
                       const SynthArgs& a, const std::vector<const GpuSpec*>& fit_gpus, const LoadedModel& lm,
                       const GpuDatabase& db, bool cuda_graph, double acceptance, const std::string& what) {
  if (vm.count("batch")) throw InputError("option '--batch-sweep': give either --batch or --batch-sweep");
  if (!a.out.empty() || !a.memory_json.empty())
    throw InputError(std::string("option '--batch-sweep': writes its table instead of a kernel list; drop ") +
                     (a.out.empty() ? "--memory-json" : "-o"));
  const std::vector<int64_t> batches = parse_batch_list(a.batch_sweep);
  const Format fmt = parse_format(a.format.empty() ? "table" : a.format);
  const std::vector<SweepRow> rows = sweep_batches(step, o, batches, fit_gpus, lm, db, cuda_graph, acceptance);
  // The page before the table: a page that cannot be written fails the run before anything is printed.
  if (!a.html.empty())
    write_file_atomically(a.html, [&](std::ostream& os) {
      os << sweep_html(rows, what + (cuda_graph ? ", CUDA graphs" : ", eager launches"));
    });
  render_sweep(rows, fmt, console_out());
}

int cmd_synth(int argc, char** argv) {
  po::options_description opts("kcast synth options");
  SynthArgs a;
  add_synth_options(opts, a);
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "kcast synth MODEL [--batch B] [--seq S] [--mode train|infer|decode|generate] [--new-tokens N]\n"
                     "       [--decode-tokens Q] [--kv-cache-dtype DT]\n"
                     "       [--dtype DT] [--attention eager|flash] [--runtime eager|serving]\n"
                     "       [--optimizer adam|adamw|sgd|none] [--head H]\n"
                     "       [--no-loss] [--recompute none|selective|full] [--recompute-modules LIST]\n"
                     "       [--recompute-layers N] [--cpu-offload-layers N] [--master-weights]\n"
                     "       [--config FILE.json]\n"
                     "       [--layers N] [--hidden D] [--heads H] [--kv-heads H] [--ffn F] [--vocab V]\n"
                     "       [--tp N] [--sequence-parallel] [--cp N] [--pp N] [--virtual-stages V] [--dp N] [--ep N]\n"
                     "       [--microbatches M] [--zero Z] [--gpus-per-node G] [-o OUT.csv] [--gpu NAME[,...]]\n"
                     "       [--memory-json OUT.json] [--cost-model M.json] [--cuda-graph] [--context neusight]\n"
                     "       [--batch-sweep B1,B2,... [--format table|csv|json] [--html OUT.html]] [--acceptance A]\n"
                     "       [--recipe delayed|current|mxfp8|block|nvfp4] [--framework eager|megatron|torchtitan|automodel]\n"
                     "       [--etp 1|TP] [--mtp-layers N] [--moe-dispatcher alltoall|deepep|hybridep|allgather] [--moe-a2a-overlap]\n"
                     "       [--moe-expert-capacity-factor F [--moe-pad-expert-input-to-capacity]] [--moe-load-imbalance F]\n"
                     "       [--fp8-param-gather] [--cuda-graph-modules attn,mlp,moe_router,moe_preprocess]\n"
                     "       [--compile] [--pp-layout L1,L2,...] [--format json (with --gpu)]\n"
                     "       [--list]",
                     opts, pos, vm))
    return 0;

  if (vm.count("list")) {
    // Names padded to the longest, so every description starts in one column after a space.
    const auto models = builtin_models();
    size_t width = 0;
    for (const auto& m : models) width = std::max(width, m.name.size() + 1);
    for (const auto& m : models) console_out() << m.name << std::string(width - m.name.size(), ' ') << m.description << "\n";
    return 0;
  }
  if (a.model.empty() && a.config.empty())
    throw InputError("synth: give a MODEL (see 'kcast synth --list') or --config FILE.json");
  if (!a.model.empty() && !a.config.empty())
    throw InputError("option '--config': give either a MODEL name or --config, not both");

  SynthOptions o = synth_options_from(vm, a);
  const bool cuda_graph = vm.count("cuda-graph") > 0;
  if (cuda_graph && o.cuda_graph_modules != 0)
    throw InputError("option '--cuda-graph-modules': --cuda-graph already replays the whole step as graphs; give one");
  double acceptance = kUnknown;
  if (vm.count("acceptance")) {
    acceptance = vm["acceptance"].as<double>();
    if (!(acceptance >= 0 && acceptance <= 1))
      throw InputError("option '--acceptance': a rate from 0 to 1 (got " + std::to_string(acceptance) + ")");
    if (a.gpus.empty() || o.decode_tokens < 2 || o.mode != Mode::decode)
      throw InputError("option '--acceptance': only with --gpu, --mode decode and --decode-tokens 2 or more "
                       "(the drafts a speculative step verifies)");
  }
  if ((cuda_graph || !a.cost_model_file.empty() || !a.context.empty()) && a.gpus.empty())
    throw InputError(std::string("option '--") +
                     (cuda_graph ? "cuda-graph" : !a.context.empty() ? "context" : "cost-model") +
                     "': only with --gpu, whose predictions it sets");
  if (!a.context.empty() && !a.batch_sweep.empty())
    throw InputError("option '--context': not with --batch-sweep (its table is the GPU's own time)");
  // Resolved before synthesis, so a misspelt GPU or a bad model fails before any output is written.
  const GpuDatabase& db = default_gpu_database();
  const std::vector<const GpuSpec*> fit_gpus =
      a.gpus.empty() ? std::vector<const GpuSpec*>{} : resolve_gpu_list(db, a.gpus);
  // With --gpu, nodes are the GPU's scale-up domain (8 on HGX boards, 72 in an NVL72 rack) unless given.
  if (!fit_gpus.empty() && !vm.count("gpus-per-node"))
    o.gpus_per_node = domain_gpus_per_node(fit_gpus, o.tp * o.pp * o.dp * o.cp);
  std::optional<LoadedModel> lm;
  if (!fit_gpus.empty()) lm = model_or_default(a.cost_model_file);
  // What is synthesized, by its name or config file, as the notes and the sweep's page name it.
  const std::string what = a.config.empty() ? a.model : a.config;
  const StepSynthesizer step = [&](const SynthOptions& ob, Footprint* f) {
    return a.config.empty() ? synthesize(a.model, ob, f) : synthesize_config_file(a.config, ob, f);
  };
  // Without a sweep, --format json prints the predicted step of each --gpu (the list then goes to -o only).
  const bool step_json = a.batch_sweep.empty() && a.format == "json";
  if (!a.format.empty() && a.batch_sweep.empty() && a.format != "json")
    throw InputError("option '--format': without --batch-sweep only json (the predicted step per --gpu)");
  if (step_json && fit_gpus.empty())
    throw InputError("option '--format': json prints the predicted step of each GPU; give --gpu");
  if (!a.html.empty() && a.batch_sweep.empty()) throw InputError("option '--html': only with --batch-sweep");
  if (!a.batch_sweep.empty()) {
    if (fit_gpus.empty()) throw InputError("option '--batch-sweep': give the GPUs to size the step on (--gpu)");
    print_batch_sweep(step, o, vm, a, fit_gpus, *lm, db, cuda_graph, acceptance, what);
    return 0;
  }
  Footprint fp;
  std::vector<Kernel> kernels = step(o, &fp);
  if (!a.context.empty()) tag_measurement_context(kernels, a.context);
  std::vector<MemoryFit> fits;
  for (const GpuSpec* g : fit_gpus) fits.push_back(memory_fit(fp, *g));
  const std::vector<SynthTiming> times =
      fit_gpus.empty() ? std::vector<SynthTiming>{}
                       : time_synth_step(kernels, fp, o, fit_gpus, *lm, db, cuda_graph, acceptance,
                                         !a.context.empty());
  // The report and the list replace what they overwrite only once both are written.
  StagedOutputs outs;
  if (!a.memory_json.empty()) {
    nlohmann::json j = memory_json_of(fp, o, fits);
    for (size_t i = 0; i < times.size(); ++i) j["gpus"][i]["predicted"] = timing_json(times[i]);
    outs.stage(a.memory_json, [&](std::ostream& os) { os << j.dump(2) << "\n"; });
  }
  if (!a.out.empty()) outs.stage(a.out, [&](std::ostream& os) { write_kernel_list(kernels, os); });
  outs.commit();
  if (step_json) {
    nlohmann::json list = nlohmann::json::array();
    for (size_t i = 0; i < times.size(); ++i) {
      list.push_back(step_json_of(times[i], fits[i], o));
      if (!a.context.empty()) list.back()["context"] = a.context;
      mark_announced(list.back(), *fit_gpus[i]);
    }
    console_out() << list.dump(2) << "\n";
  } else if (a.out.empty()) {
    write_kernel_list(kernels, console_out());
  }
  for (const std::string& note : fp.notes)
    console_err() << "kcast synth: " << what << ": " << note << "\n";
  console_err() << footprint_line(fp, o) << "\n";
  for (size_t i = 0; i < fits.size(); ++i) {
    console_err() << fit_line(fp, o, fits[i]) << "\n" << timing_line(times[i], o, cuda_graph)
                  << (a.context.empty() ? "" : " [as " + a.context + " timed it: its per-op floors added]") << "\n";
    if (const std::string parts = parts_line(times[i], o); !parts.empty()) console_err() << parts << "\n";
  }
  return 0;
}

}  // namespace kcast::cli
