// One model replica as `kcast serve` runs it on a GPU: its iteration cost, its engine's limits and its
// KV cache in blocks. Under attention data parallelism the ranks (one per GPU) are pooled: N times the
// per-GPU limits and blocks; the scheduler routes each request to one rank (EngineConfig::ranks).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "predict/serve/engine.h"
#include "predict/serve/iteration_cost.h"
#include "predict/serve/workload.h"

namespace kcast::serve {

struct Replica {
  std::unique_ptr<IterationCost> cost;
  EngineConfig per_rank;  // the engine's settings on one GPU, as given
  EngineConfig engine;    // pooled over the attention data-parallel ranks
  int64_t rank_blocks = 0, blocks = 0;
};

// KV-cache blocks on one GPU of the replica: the memory the engine may use less the weights and the
// activation peak of its largest iteration, in blocks. InputError naming `what` when nothing is left.
int64_t kv_cache_blocks(const GpuSpec& g, const EngineConfig& e, const IterationCost& cost, const std::string& what);

// The replica of `base` (synth's serving options) on `gpu` with `per_rank` settings; InputError when
// the model cannot be served that way or does not fit.
Replica make_replica(const StepSynthesizer& step, const synth::SynthOptions& base, const GpuSpec& gpu,
                     const LoadedModel& lm, const GpuDatabase& db, const EngineConfig& per_rank, const std::string& what);

// InputError when a request cannot fit one rank's cache (attention data parallelism pools the blocks,
// but a sequence lives on one GPU).
void check_fits_one_rank(const Replica& r, const std::vector<Request>& reqs);

}  // namespace kcast::serve
