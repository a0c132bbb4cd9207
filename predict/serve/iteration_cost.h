// The time of one serving-engine iteration on one GPU, from synth's serving-stack kernels and the
// cost model — no second model. An iteration of a continuous-batching engine (vLLM V1, SGLang,
// TensorRT-LLM's in-flight batching) runs every scheduled token through the model at once: prompt
// chunks being prefilled and one token of each decoding sequence. Its kernels split three ways:
//   * the token-proportional rows (projections, norms, rotary, activation, KV-cache writes, TP
//     collectives, MoE routing and experts): synth's decode step with one row per scheduled token
//     (`--mode decode --batch N`), so its GEMMs have M = N as the engine's do;
//   * the output head and sampler: logits only for the sequences that sample this iteration;
//   * attention: one varlen kernel per layer over every sequence's query tokens and keys (vLLM V1's
//     unified attention, FlashInfer / TRT-LLM's batched kernels), whose FLOPs and bytes are synth's
//     per key and per query token summed over the batch (a chunk of q tokens after p cached keys
//     attends causally to p + 1 ... p + q keys).
// With attention data parallelism (base.dp = ranks, each a GPU with its own sequences; experts split
// over base.ep of them) every rank steps together, meeting at each layer's expert exchange: the
// iteration is its busiest rank's own rows (attention, projections, norms, head over that rank's
// tokens) plus the expert rows over every rank's tokens, routed evenly (padded to the CUDA graph's
// size where one replays). TensorRT-LLM's "ADP balance" blog: the iteration time is the slowest rank's.
// With pipeline parallelism (`pipeline_stages` GPUs after one another, each with layers / pp of the
// model) an iteration is a micro-batch through every stage: its latency is the whole model's time, the
// interval at which stage after stage takes the next micro-batch is one stage's share of the layers
// plus the head the last stage runs (activation sends between stages, microseconds over NVLink, left
// out); memory per GPU is 1 / pp of the weights and of the KV cache per token.
// The first two are predicted on a grid of token counts (exact up to 64, then 16 points per octave,
// linear between), memoized: a simulation of thousands of requests synthesizes a few hundred steps.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "calibrate/model_file.h"
#include "model/gpu_database.h"
#include "predict/synth/generation.h"
#include "predict/synth/synth.h"

namespace kcast::serve {

using StepSynthesizer = synth::StepSynth;  // synth's step for a set of options (generation.h)

// One sequence's share of an iteration: `tokens` query tokens after `cached` keys already in its cache.
struct SeqWork {
  int64_t tokens = 1;
  int64_t cached = 0;
  int64_t rank = 0;  // its attention data-parallel rank (EngineConfig::ranks)
};

// An iteration's time both ways a pipeline sees it: the interval before the next micro-batch can
// start, and its whole pass (the same without pipeline stages).
struct IterationPass {
  double interval_us = 0, latency_us = 0;
};

// One attention data-parallel rank's share of an iteration.
struct RankLoad {
  int64_t tokens = 0, sampled = 0;
  double attn_flops = 0, attn_bytes = 0;
};

// What one iteration runs.
struct IterationWork {
  int64_t tokens = 0;   // every scheduled token (prefill chunks + decode tokens)
  int64_t sampled = 0;  // sequences whose next token is sampled (decodes and completed prefills)
  // Attention's FLOPs and bytes over the batch, summed with add() below.
  double attn_flops = 0, attn_bytes = 0;
  // Under attention data parallelism, the same per rank (IterationCost::add sizes it; empty without).
  std::vector<RankLoad> ranks;
  // `n` more sampled sequences, on `rank`.
  void sample(int64_t rank, int64_t n = 1) {
    sampled += n;
    if (rank < int64_t(ranks.size())) ranks[size_t(rank)].sampled += n;
  }
  // Speculative decoding: the sequences the draft model proposes for, in `draft_steps` one-token steps,
  // and the whole model's attention work of one such token each (add_draft below).
  int64_t draft_seqs = 0, draft_steps = 0;
  double draft_attn_flops = 0, draft_attn_bytes = 0;
};

class IterationCost {
 public:
  // `base`: the serving options (runtime serving, flash attention, dtype, tp, KV-cache dtype);
  // `graph_max_tokens`: iterations of at most this many tokens replay CUDA graphs captured at the
  // engine's sizes (padded up to the next), larger ones launch eagerly. Throws InputError when the
  // model cannot be served that way (synth's own refusals).
  IterationCost(StepSynthesizer synth, const synth::SynthOptions& base, const GpuSpec& gpu, const LoadedModel& lm,
                const GpuDatabase& db, int64_t graph_max_tokens);

  // Adds one sequence's attention work to `w` (and its tokens).
  void add(IterationWork& w, const SeqWork& s) const;
  // Speculative decoding: a sequence at `s` whose drafts the draft model proposes in `steps` one-token
  // steps. The draft model is taken as one of the target's layers and its LM head (DeepSeek's MTP
  // module, an EAGLE head: one decoder layer reading the target's hidden state), each step 1 / layers
  // of the target's token-proportional rows and attention at the batch's draft tokens, plus the head.
  void add_draft(IterationWork& w, const SeqWork& s, int64_t steps) const;
  // The iteration's predicted time, microseconds: with pipeline stages the interval before the next
  // micro-batch can start (the slowest, last stage's share); latency_us the whole pass.
  double us(const IterationWork& w) { return pass(w).interval_us; }
  double latency_us(const IterationWork& w) { return pass(w).latency_us; }
  IterationPass pass(const IterationWork& w);  // both at once
  void set_pipeline_stages(int64_t pp) { pp_ = std::max<int64_t>(1, pp); }
  int64_t pipeline_stages() const { return pp_; }

  int64_t ranks() const { return ranks_; }
  // Memory per GPU, bytes: the weights, the KV cache per token, one layer's activation peak for an
  // iteration of `tokens` scheduled tokens over `seqs` sequences, per rank (synth's inference
  // estimate: the engines size it so at start-up, with a forward of their limits).
  double weight_bytes() const { return weight_bytes_ / double(pp_); }
  double kv_bytes_per_token() const { return kv_bytes_per_token_ / double(pp_); }
  double activation_bytes(int64_t tokens, int64_t seqs) const;
  // The engine's CUDA-graph capture size an iteration of n tokens is padded to (n itself when eager).
  int64_t graph_size(int64_t n) const;
  int64_t synthesized_steps() const { return int64_t(grid_.size()); }

 private:
  struct GridPoint {
    double local_us_eager = 0, local_us_graph = 0;    // token-proportional rows of the rank's own tokens
    double expert_us_eager = 0, expert_us_graph = 0;  // the experts and their exchange (every rank's tokens)
    double head_us_eager = 0, head_us_graph = 0;      // head and sampler, at this many sampled sequences
  };
  const GridPoint& point(int64_t n);
  // A part of the grid point's time at n tokens, linear between the grid points around n.
  double on_grid(int64_t n, double GridPoint::*part);
  // Its token-proportional rows, replayed as a graph or launched eagerly: the rank's own, the experts'.
  double local_us(int64_t n, bool graph);
  double expert_us(int64_t n, bool graph);

  StepSynthesizer synth_;
  synth::SynthOptions base_;
  const GpuSpec& gpu_;
  const LoadedModel& lm_;
  const GpuDatabase& db_;
  GpuCaps caps_;
  int64_t graph_max_;
  int64_t ranks_;  // attention data-parallel ranks (SynthOptions::dp): the grid is per rank
  int64_t pp_ = 1;  // pipeline stages
  // An iteration's token-proportional rows, its attention and its head (logits and sampler).
  void parts(const IterationWork& w, double& body, double& attention, double& head);
  // Under attention data parallelism, the whole iteration: the experts plus the busiest rank's own rows.
  void rank_parts(const IterationWork& w, double& step);
  std::map<int64_t, GridPoint> grid_;
  // The attention rows' time at these FLOPs and bytes (memoized within 0.5% of each).
  double attention_us(double flops, double bytes, bool graph);
  // The draft model's steps of an iteration (add_draft).
  double draft_us(const IterationWork& w);
  double layers_ = 1;  // transformer layers on this GPU (Footprint::layers)
  // Attention per layer (summed over the model's attention rows): FLOPs per (query, key) pair and
  // per query token, bytes per key and per query token; the kernel it is predicted as.
  double flops_per_pair_ = 0, flops_per_query_ = 0, bytes_per_key_ = 0, bytes_per_query_ = 0;
  std::vector<Kernel> attn_rows_;  // prepared rows (count = layers), predicted with scaled work
  std::vector<double> attn_flops_share_, attn_bytes_share_;
  std::map<std::tuple<int64_t, int64_t, bool>, double> attn_memo_;
  int64_t chunk_ = 0;         // chunked attention's chunk (Footprint::attention_chunk); 0: none
  double chunk_share_ = 0;    // the share of attention's work in chunked layers
  double weight_bytes_ = 0, kv_bytes_per_token_ = 0;
};

}  // namespace kcast::serve
