#include "predict/serve/iteration_cost.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "io/classifier_rules.h"
#include "io/kernel_list_csv.h"
#include "model/error.h"
#include "model/model_params.h"
#include "model/transfer.h"
#include "predict/e2e/predictor.h"

namespace kcast::serve {

namespace {

using synth::Footprint;
using synth::Mode;
using synth::SynthOptions;

constexpr const char* kHeadPrefix = "head.";  // the LM head and the sampler (synth's serving_head)
constexpr int64_t kExactGrid = 64;            // token counts synthesized exactly up to here
constexpr int64_t kPointsPerOctave = 16;
constexpr int64_t kRefKeys1 = 1024, kRefKeys2 = 2048;  // the contexts attention's per-key costs come from
constexpr double kAttnBucket = 1.005;                  // attention memo: FLOPs and bytes within 0.5%

bool is_attention(const Kernel& k) { return k.cls == KernelClass::attention; }
bool is_head(const Kernel& k) { return k.name.starts_with(kHeadPrefix); }
// A mixture's experts and their dispatch / combine (synth's moe.experts, moe.dispatch, moe.combine
// rows): under expert parallelism they run over every rank's tokens, the rest over the rank's own.
bool is_expert(const Kernel& k) {
  for (const char* part : {".moe.experts", ".moe.dispatch", ".moe.combine"})
    if (k.name.find(part) != std::string::npos) return true;
  return false;
}

// The rows synth writes for `o`, read back as predict reads a written list (so the rows carry what
// their names tell the model), with the Footprint (`fp` may be null).
std::vector<Kernel> read_back(const StepSynthesizer& synth, const SynthOptions& o, const GpuDatabase& db,
                              Footprint* fp) {
  std::ostringstream text;
  write_kernel_list(synth(o, fp), text);
  return parse_kernel_list(text.str(), "<serve>", KernelListOptions{&db, &default_classifier()});
}

// A decode step of `batch` one-token sequences at `keys` cached keys.
SynthOptions decode_step(SynthOptions o, int64_t batch, int64_t keys) {
  o.mode = Mode::decode;
  o.batch = batch;
  o.seq = keys;
  o.decode_tokens = 1;
  return o;
}

// The next grid point at or above n, and the one at or below.
int64_t grid_step(int64_t n) {
  if (n <= kExactGrid) return 1;
  int64_t octave = 1;
  while (octave * 2 <= n) octave *= 2;
  return std::max<int64_t>(1, octave / kPointsPerOctave);
}

}  // namespace

IterationCost::IterationCost(StepSynthesizer synth, const SynthOptions& base, const GpuSpec& gpu, const LoadedModel& lm,
                             const GpuDatabase& db, int64_t graph_max_tokens)
    : synth_(std::move(synth)), base_(base), gpu_(gpu), lm_(lm), db_(db), caps_(lm.caps_for(gpu)),
      graph_max_(graph_max_tokens), ranks_(std::max<int64_t>(1, base.dp)) {
  // Attention's costs per key and per query token, from two single-sequence decode steps.
  Footprint fp1, fp2;
  const std::vector<Kernel> r1 = read_back(synth_, decode_step(base_, ranks_, kRefKeys1), db_, &fp1);
  const std::vector<Kernel> r2 = read_back(synth_, decode_step(base_, ranks_, kRefKeys2), db_, &fp2);
  if (r1.size() != r2.size()) throw InputError("serve: the model's decode steps differ in shape between contexts");
  double f1 = 0, f2 = 0, b1 = 0, b2 = 0;
  for (size_t i = 0; i < r1.size(); ++i) {
    if (!is_attention(r1[i])) continue;
    attn_rows_.push_back(r2[i]);
    f1 += known(r1[i].flops) ? r1[i].flops : 0;
    f2 += known(r2[i].flops) ? r2[i].flops : 0;
    b1 += known(r1[i].bytes) ? r1[i].bytes : 0;
    b2 += known(r2[i].bytes) ? r2[i].bytes : 0;
  }
  if (attn_rows_.empty()) throw InputError("serve: the model's serving step has no attention kernel to schedule");
  const double dk = double(kRefKeys2 - kRefKeys1);
  flops_per_pair_ = (f2 - f1) / dk;
  flops_per_query_ = std::max(0.0, f1 - flops_per_pair_ * double(kRefKeys1));
  bytes_per_key_ = (b2 - b1) / dk;
  bytes_per_query_ = std::max(0.0, b1 - bytes_per_key_ * double(kRefKeys1));
  for (const Kernel& k : attn_rows_) {
    attn_flops_share_.push_back(f2 > 0 && known(k.flops) ? k.flops / f2 : 0);
    attn_bytes_share_.push_back(b2 > 0 && known(k.bytes) ? k.bytes / b2 : 0);
  }
  weight_bytes_ = fp1.weight_bytes;
  layers_ = std::max(1.0, fp1.layers);
  chunk_ = fp1.attention_chunk;
  chunk_share_ = chunk_ > 0 ? fp1.chunked_attention_share : 0.0;
  kv_bytes_per_token_ = (fp2.kv_cache_bytes - fp1.kv_cache_bytes) / dk;
}

// The engines size their KV cache after a forward at their limits (vLLM V1's profile_run: max tokens,
// logits of min(max sequences, max tokens) rows; TensorRT-LLM's executor likewise): `tokens` as
// prompts of `seqs` sequences, whose last tokens alone reach the LM head and sampler.
double IterationCost::activation_bytes(int64_t tokens, int64_t seqs) const {
  const int64_t batch = std::max<int64_t>(1, std::min(seqs, tokens));
  SynthOptions o = base_;
  o.mode = Mode::infer;
  o.batch = batch * ranks_;
  o.seq = std::max<int64_t>(1, tokens / batch);
  o.kv_cache_dtype.reset();  // a prompt's forward holds no cache of its own (counted apart)
  Footprint fa;
  synth_(o, &fa);
  return fa.activation_bytes;
}

int64_t IterationCost::graph_size(int64_t n) const {
  // vLLM V1's capture sizes (CompilationConfig): 1, 2, 4, then multiples of 8 to 256 and of 16 beyond,
  // up to the largest captured; a batch is padded up to the next.
  if (n > graph_max_) return n;
  int64_t g = n <= 1 ? 1 : n <= 2 ? 2 : n <= 4 ? 4 : n <= 256 ? (n + 7) / 8 * 8 : (n + 15) / 16 * 16;
  return std::min(g, graph_max_);
}

void IterationCost::add(IterationWork& w, const SeqWork& s) const {
  const double q = double(s.tokens), p = double(s.cached);
  w.tokens += s.tokens;
  // Causal pairs of the queries at positions p .. p + q - 1, and the keys their kernel reads.
  double pairs = q * p + q * (q + 1) / 2, keys = p + q;
  if (chunk_share_ > 0) {
    // Chunked layers: position i attends to the (i mod C) + 1 keys of its own chunk; the kernel reads
    // the keys from the start of the first query's chunk. The rest attend to every key.
    const int64_t C = chunk_;
    auto upto = [C](int64_t n) {  // sum over i < n of (i mod C) + 1
      const double full = double(n / C), r = double(n % C);
      return full * double(C) * double(C + 1) / 2 + r * (r + 1) / 2;
    };
    const double chunk_pairs = upto(s.cached + s.tokens) - upto(s.cached);
    const double chunk_keys = double(s.cached + s.tokens - s.cached / C * C);
    pairs = (1 - chunk_share_) * pairs + chunk_share_ * chunk_pairs;
    keys = (1 - chunk_share_) * keys + chunk_share_ * chunk_keys;
  }
  const double flops = flops_per_pair_ * pairs + flops_per_query_ * q, bytes = bytes_per_key_ * keys + bytes_per_query_ * q;
  w.attn_flops += flops;
  w.attn_bytes += bytes;
  if (ranks_ > 1) {
    if (s.rank < 0 || s.rank >= ranks_) throw std::logic_error("serve: a sequence on a rank the replica lacks");
    w.ranks.resize(size_t(ranks_));
    RankLoad& r = w.ranks[size_t(s.rank)];
    r.tokens += s.tokens;
    r.attn_flops += flops;
    r.attn_bytes += bytes;
  }
}

void IterationCost::add_draft(IterationWork& w, const SeqWork& s, int64_t steps) const {
  ++w.draft_seqs;
  w.draft_steps = std::max(w.draft_steps, steps);
  IterationWork one;
  add(one, s);
  w.draft_attn_flops += one.attn_flops;
  w.draft_attn_bytes += one.attn_bytes;
}

const IterationCost::GridPoint& IterationCost::point(int64_t n) {
  auto it = grid_.find(n);
  if (it != grid_.end()) return it->second;
  const std::vector<Kernel> rows = read_back(synth_, decode_step(base_, n * ranks_, 16), db_, nullptr);
  E2eOptions eo;
  eo.mode = PredictMode::absolute;
  eo.keep_rows = true;
  eo.max_threads = 1;
  PreparedWorkload w = prepare_workload(rows, lm_, db_, eo, "<serve>");
  const std::vector<Target> targets{{gpu_.name, caps_}};
  GridPoint g;
  for (bool graph : {false, true}) {
    w.opt.cuda_graph = graph;
    const GpuPrediction p = predict_targets(w, targets).front();
    for (size_t r = 0; r < rows.size(); ++r) {
      if (is_attention(rows[r])) continue;
      const double t = rows[r].count * p.row_us[r];
      double& part = is_head(rows[r])     ? (graph ? g.head_us_graph : g.head_us_eager)
                     : is_expert(rows[r]) ? (graph ? g.expert_us_graph : g.expert_us_eager)
                                          : (graph ? g.local_us_graph : g.local_us_eager);
      part += t;
    }
  }
  return grid_.emplace(n, g).first->second;
}

double IterationCost::on_grid(int64_t n, double GridPoint::*part) {
  const int64_t step = grid_step(n);
  const int64_t lo = n / step * step, hi = lo == n ? n : lo + step;
  const double a = point(lo).*part;
  if (hi == lo) return a;
  const double b = point(hi).*part;
  return a + (b - a) * double(n - lo) / double(hi - lo);
}

double IterationCost::local_us(int64_t n, bool graph) {
  return on_grid(n, graph ? &GridPoint::local_us_graph : &GridPoint::local_us_eager);
}

double IterationCost::expert_us(int64_t n, bool graph) {
  return on_grid(n, graph ? &GridPoint::expert_us_graph : &GridPoint::expert_us_eager);
}

IterationPass IterationCost::pass(const IterationWork& w) {
  double body = 0, attention = 0, head = 0;
  parts(w, body, attention, head);
  const double draft = w.draft_seqs > 0 && w.draft_steps > 0 ? draft_us(w) : 0;
  const double whole = body + head + attention + draft;
  return {pp_ == 1 ? whole : (body + attention) / double(pp_) + head + draft, whole};
}

double IterationCost::draft_us(const IterationWork& w) {
  // Each draft step runs one token per drafting sequence (a rank's share under attention data parallelism).
  const int64_t n = (w.draft_seqs + ranks_ - 1) / ranks_;
  const bool graph = n <= graph_max_;
  const int64_t m = graph ? graph_size(n) : n;
  const double body = local_us(m, graph) + expert_us(m, graph);
  const double head = on_grid(n, &GridPoint::head_us_eager);
  const double attention =
      attention_us(w.draft_attn_flops / double(ranks_), w.draft_attn_bytes / double(ranks_), graph);
  return double(w.draft_steps) * ((body + attention) / layers_ + head);
}

void IterationCost::parts(const IterationWork& w, double& body, double& attention, double& head) {
  body = attention = head = 0;
  if (w.tokens <= 0) return;
  if (ranks_ > 1) {
    rank_parts(w, body);
    return;
  }
  const bool graph = w.tokens <= graph_max_;
  const int64_t n = graph ? graph_size(w.tokens) : w.tokens;
  body = local_us(n, graph) + expert_us(n, graph);
  if (w.sampled > 0) head = on_grid(w.sampled, &GridPoint::head_us_eager);  // logits and sampler run outside the graphs
  attention = attention_us(w.attn_flops, w.attn_bytes, graph);
}

void IterationCost::rank_parts(const IterationWork& w, double& step) {
  int64_t most = 0;
  for (const RankLoad& r : w.ranks) most = std::max(most, r.tokens);
  // A graph replays only when every rank's batch fits one, each padded to the busiest's size (idle
  // ranks run it too: the exchange needs them all).
  const bool graph = most <= graph_max_;
  const int64_t expert_tokens = graph ? graph_size(most) : (w.tokens + ranks_ - 1) / ranks_;
  step = expert_us(expert_tokens, graph);
  double slowest = 0;
  for (const RankLoad& r : w.ranks) {
    const int64_t n = graph ? graph_size(most) : std::max<int64_t>(1, r.tokens);
    double t = local_us(n, graph);
    if (r.sampled > 0) t += on_grid(r.sampled, &GridPoint::head_us_eager);
    t += attention_us(r.attn_flops, r.attn_bytes, graph);
    slowest = std::max(slowest, t);
  }
  step += slowest;
}

double IterationCost::attention_us(double flops_in, double bytes_in, bool graph) {
  // The varlen kernel at the batch's FLOPs and bytes, memoized within 0.5% of each and predicted at
  // the bucket's own value, so the result does not depend on the order of iterations.
  const auto bucket = [](double v) { return v > 1 ? int64_t(std::floor(std::log(v) / std::log(kAttnBucket))) : -1; };
  const int64_t fb = bucket(flops_in), bb = bucket(bytes_in);
  const std::tuple<int64_t, int64_t, bool> key{fb, bb, graph};
  auto it = attn_memo_.find(key);
  if (it == attn_memo_.end()) {
    const double flops = fb >= 0 ? std::pow(kAttnBucket, double(fb) + 0.5) : 0;
    const double bytes = bb >= 0 ? std::pow(kAttnBucket, double(bb) + 0.5) : 0;
    const double blend = lm_.model.params()[kFloorBlend];
    double a = 0;
    for (size_t i = 0; i < attn_rows_.size(); ++i) {
      Kernel k = attn_rows_[i];
      k.flops = flops * attn_flops_share_[i];
      k.bytes = bytes * attn_bytes_share_[i];
      const double p = lm_.model.predict(k, caps_).time_us;
      a += k.count * (graph ? graph_time(p, caps_.launch_floor_us, blend) : p);
    }
    it = attn_memo_.emplace(key, a).first;
  }
  return it->second;
}

}  // namespace kcast::serve
