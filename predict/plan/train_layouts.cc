#include "predict/plan/train_layouts.h"

#include <algorithm>

#include "model/error.h"
#include "predict/synth/recompute_modules.h"

namespace kcast::plan {

namespace {

const int64_t kDegrees[] = {1, 2, 4, 8, 16, 32, 64};
const int64_t kMicroBatchSizes[] = {1, 2, 4, 8};

bool allowed(const LayoutSpace& s, const char* key, int64_t v) {
  auto it = s.fixed.find(key);
  return it == s.fixed.end() || it->second == v;
}

}  // namespace

const char* to_string(Recompute r) {
  return r == Recompute::full ? "full" : r == Recompute::selective ? "selective" : "none";
}

std::string recompute_label(const TrainLayout& l) {
  if (l.offload_layers > 0) return "offload:" + std::to_string(l.offload_layers);
  if (l.recompute_layers > 0) return "full:" + std::to_string(l.recompute_layers);
  if (!l.modules) return to_string(l.recompute);
  std::string out = synth::recompute_modules_string(l.modules);
  std::replace(out.begin(), out.end(), ',', '+');
  return out;
}

std::vector<unsigned> recompute_module_ladder(const synth::TransformerConfig& cfg) {
  std::vector<unsigned> out;
  if (cfg.experts > 0) out.insert(out.end(), {synth::kRecomputeMoeAct, synth::kRecomputeMoeAct | synth::kRecomputeLayernorm});
  if (cfg.mla()) {
    out.push_back(synth::kRecomputeMlaUpProj);
    if (cfg.experts > 0) out.push_back(synth::kRecomputeMlaUpProj | synth::kRecomputeMoeAct);
  }
  return out;
}

std::vector<TrainLayout> enumerate_train_layouts(const LayoutSpace& s) {
  std::vector<TrainLayout> out;
  // What --fix holds on every layout: Megatron's recomputed modules and offloaded layers (0: none).
  const auto fixed = [&](const char* key) {
    const auto it = s.fixed.find(key);
    return it == s.fixed.end() ? int64_t(0) : it->second;
  };
  const unsigned mods = unsigned(fixed("recompute_modules"));
  const int64_t off = fixed("offload");
  for (int64_t tp : kDegrees) {
    // Tensor parallelism stays inside a node and must split the query and key/value heads.
    if (tp > s.gpus_per_node || s.gpus % tp || (s.heads && s.heads % tp) || !allowed(s, "tp", tp)) continue;
    if (s.kv_heads && s.kv_heads % tp && tp % s.kv_heads) continue;
    for (int64_t pp : kDegrees) {
      if (s.gpus % (tp * pp) || (s.layers && pp > s.layers) || !allowed(s, "pp", pp)) continue;
      for (int64_t cp : kDegrees) {
        if (s.gpus % (tp * pp * cp) || s.seq % (2 * cp) || !allowed(s, "cp", cp)) continue;
        const int64_t dp = s.gpus / (tp * pp * cp);
        if (s.batch % dp || !allowed(s, "dp", dp)) continue;
        for (int64_t ep : kDegrees) {
          // Experts split over the data x context-parallel ranks, dividing the experts; or, in more GPUs
          // than those, folded over the tensor x context x data-parallel ones (synth.h, folded_experts).
          if (ep > 1 && (!s.experts || s.experts % ep || ((dp * cp) % ep && (tp * cp * dp) % ep))) continue;
          if (!allowed(s, "ep", ep)) continue;
          for (int64_t vp = 1; vp <= std::max<int64_t>(1, (s.layers + 2) / pp); ++vp) {
            // Interleaving splits each stage's layers into vp equal chunks: the layers, or the layers
            // with the embedding and the loss counted as two more (Megatron-LM's layout), divide evenly.
            // Where the stages divide neither (DeepSeek-V3's 61 layers, 63 with the embedding and the
            // loss), the split is uneven anyway (pipeline_layout.h's balanced one): any vp up to a layer
            // a chunk.
            const bool uneven = s.layers % pp != 0 && (s.layers + 2) % pp != 0;
            if (vp > 1 && (pp == 1 || pp * vp > s.layers ||
                           (!uneven && s.layers % (pp * vp) && (s.layers + 2) % (pp * vp))))
              continue;
            if (!allowed(s, "vp", vp)) continue;
            for (int64_t mbs : kMicroBatchSizes) {
              if ((s.batch / dp) % mbs || !allowed(s, "mbs", mbs)) continue;
              const int64_t m = s.batch / dp / mbs;
              // A pipeline needs at least as many micro-batches as stages (and a multiple when interleaved).
              if (pp > 1 && (m < pp || (vp > 1 && m % pp))) continue;
              if (!allowed(s, "microbatches", m)) continue;
              for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
                // Selective recomputation re-runs eager attention's core, which the fused attention of
                // these frameworks does not keep: only when asked for (--fix recompute=selective).
                if (rc == Recompute::selective && !s.fixed.count("recompute")) continue;
                if (!allowed(s, "recompute", int64_t(rc))) continue;
                // --fix offload=N: Megatron offloads only one stage's layers and never while recomputing.
                if (off > 0 && (pp > 1 || rc != Recompute::none)) continue;
                if (allowed(s, "zero", s.default_zero)) out.push_back({tp, pp, cp, ep, dp, vp, m, mbs, rc, -1, mods, 0, off});
                if (s.megatron_fsdp && pp == 1 && dp > 1 && allowed(s, "zero", 3))
                  out.push_back({tp, pp, cp, ep, dp, vp, m, mbs, rc, 3, mods, 0, off});
              }
            }
          }
        }
      }
    }
  }
  return out;
}

std::map<std::string, int64_t> parse_fix(const std::string& text) {
  std::map<std::string, int64_t> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    const bool known_key = key == "tp" || key == "pp" || key == "cp" || key == "ep" || key == "dp" || key == "vp" ||
                           key == "mbs" || key == "microbatches" || key == "recompute" || key == "zero" ||
                           key == "offload";
    if (!known_key)
      throw InputError("option '--fix': '" + item + "': give KEY=VALUE with KEY one of tp, pp, cp, ep, dp, vp, mbs, "
                       "microbatches, recompute, zero, offload");
    if (key == "recompute") {
      if (value == "none") out[key] = 0;
      else if (value == "selective") out[key] = 1;
      else if (value == "full") out[key] = 2;
      else {  // Megatron's modules, '+'-joined
        std::string list = value;
        std::replace(list.begin(), list.end(), '+', ',');
        try {
          out["recompute_modules"] = synth::parse_recompute_modules("fix", list);
        } catch (const InputError& e) {
          throw InputError("option '--fix': recompute='" + value + "' is not one of none, selective, full or "
                           "Megatron's modules joined by '+' (mla_up_proj+moe_act): " + e.what());
        }
        out[key] = 1;
      }
    } else {
      size_t used = 0;
      int64_t v = 0;
      try {
        v = std::stoll(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      // offload=0: no CPU activation offloading (the planner's search off); the others at least 1.
      const int64_t least = key == "offload" ? 0 : 1;
      if (used != value.size() || value.empty() || v < least)
        throw InputError("option '--fix': " + key + "='" + value + "' is not a " +
                         (least ? "positive" : "non-negative") + " integer");
      out[key] = v;
    }
    start = end + 1;
  }
  return out;
}

synth::SynthOptions with_layout(synth::SynthOptions o, const TrainLayout& l, int64_t batch) {
  o.mode = synth::Mode::train;
  o.batch = batch;
  o.tp = l.tp;
  o.pp = l.pp;
  o.cp = l.cp;
  o.ep = l.ep;
  o.dp = l.dp;
  o.virtual_stages = l.vp;
  o.microbatches = l.microbatches;
  o.sequence_parallel = l.tp > 1;
  if (l.zero >= 0) o.zero = l.zero;
  if (l.dp == 1) o.zero = 0;  // nothing to shard the optimizer state over
  // Megatron FSDP shards the parameters themselves: --fp8-param-gather is the distributed optimizer's.
  if (o.zero >= 3) o.fp8_param_gather = false;
  o.recompute = l.recompute == Recompute::full;
  o.selective_recompute = l.recompute == Recompute::selective;
  o.recompute_modules = 0;
  if (l.modules) synth::set_recompute_modules(o, l.modules);  // as the command's --recompute-modules sets them
  o.recompute_layers = l.recompute_layers;
  o.cpu_offload_layers = l.offload_layers;
  // Routing imbalance is the expert-parallel group's: none without one, at most every routed row on one GPU.
  o.moe_load_imbalance = l.ep > 1 ? std::min(o.moe_load_imbalance, double(l.ep)) : 1.0;
  return o;
}

}  // namespace kcast::plan
