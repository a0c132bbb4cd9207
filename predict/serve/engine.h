// The serving engines' scheduler settings that `kcast serve` simulates, with each engine's defaults
// and where they come from (docs/serve.md has the table with sources).
#pragma once
#include <cstdint>
#include <string>

#include "model/gpu_database.h"
#include "predict/synth/synth.h"

namespace kcast::serve {

enum class EngineKind { vllm, sglang, trtllm };

struct EngineConfig {
  EngineKind kind = EngineKind::vllm;
  std::string name = "vllm";
  int64_t max_num_seqs = 256;         // running sequences at most (TRT-LLM: max_batch_size)
  int64_t max_batched_tokens = 8192;  // tokens one iteration schedules at most (TRT-LLM: max_num_tokens)
  bool chunked_prefill = true;        // a prompt longer than the budget left is split over iterations
  int64_t block_size = 16;            // KV-cache tokens per block (TRT-LLM: tokens_per_block; SGLang: page)
  double gpu_memory_utilization = 0.9;  // the share of GPU memory the engine may use in all
  // TensorRT-LLM's GUARANTEED_NO_EVICT capacity scheduler: a request is admitted only when blocks for
  // its whole length (prompt + every output token) are free, so nothing is ever preempted. vLLM and
  // SGLang allocate as the sequence grows and preempt (recompute) when the cache runs out.
  bool reserve_whole_request = false;
  // TensorRT-LLM's KV-cache fraction is of the memory left after the weights and activations; vLLM's
  // and SGLang's is of the whole GPU, the weights and activations inside it.
  bool fraction_of_free = false;
  // Whether one iteration mixes prompt chunks with decode tokens (vLLM V1, TensorRT-LLM in-flight
  // batching) or runs a prefill batch apart, ahead of decoding, when requests wait (SGLang's default,
  // --enable-mixed-chunk off).
  bool mixed_batches = true;
  int64_t graph_max_tokens = 512;  // decode batches up to here replay CUDA graphs
  // Pipeline stages of the replica (--pp): up to this many micro-batches in flight, a sequence in at
  // most one of them (its next token needs its last), as vLLM's and TensorRT-LLM's pipeline-parallel
  // schedulers run them.
  int64_t pipeline_stages = 1;
  // Attention data-parallel ranks (--attention-dp: one per GPU). Each runs its own requests under its
  // own share of max_num_seqs and max_batched_tokens (the limits above are the ranks' sum), a request
  // staying on the rank it was routed to: TensorRT-LLM's DefaultADPRouter sends each new request to the
  // rank with the fewest active prompt tokens, then requests. The ranks step together (the MoE
  // exchange each layer), so an iteration lasts as long as its busiest rank.
  int64_t ranks = 1;
  // Speculative decoding (vLLM's --speculative-config, SGLang's --speculative-num-draft-tokens,
  // TensorRT-LLM's MTP / EAGLE decoding): each decoding sequence's step verifies this many draft
  // tokens after its last one, and a draft model proposes the next ones, one token per sequence per
  // draft step. 0: off.
  int64_t speculative_tokens = 0;
  // The chance that a draft token is accepted, its predecessors having been: a step keeps
  // (1 - a^(k+1)) / (1 - a) tokens on average (k + 1 at a = 1).
  double acceptance = 0;
};

// Whose layer kernels the engine runs (synth.h); InputError naming --engine when unknown.
synth::ServingKernels engine_kernels(const std::string& name);

// The engine's defaults on `gpu` (some depend on its memory); InputError naming --engine when unknown.
EngineConfig engine_defaults(const std::string& name, const GpuSpec& gpu);

}  // namespace kcast::serve
