#include "predict/serve/replica.h"

#include <cmath>

#include "model/error.h"
#include "predict/report/text_util.h"

namespace kcast::serve {

namespace {
std::string gb(double bytes) { return report::fixed(bytes / 1e9, 2) + " GB"; }
}  // namespace

int64_t kv_cache_blocks(const GpuSpec& g, const EngineConfig& e, const IterationCost& cost, const std::string& what) {
  if (!known(g.memory_gb)) throw InputError("option '--gpu': " + g.name + " has no memory size in the GPU database");
  const double capacity = g.memory_gb * 1073741824.0;
  const double activations = cost.activation_bytes(e.max_batched_tokens, e.max_num_seqs);
  const double fixed = cost.weight_bytes() + activations;
  const double kv = e.fraction_of_free ? e.gpu_memory_utilization * (capacity - fixed)
                                       : e.gpu_memory_utilization * capacity - fixed;
  const double per_block = cost.kv_bytes_per_token() * double(e.block_size);
  const int64_t blocks = kv > 0 && per_block > 0 ? int64_t(std::floor(kv / per_block)) : 0;
  if (blocks <= 0)
    throw InputError("serve: " + what + " does not fit on " + g.name + ": weights " + gb(cost.weight_bytes()) +
                     " and activations " + gb(activations) + " of " + gb(capacity) +
                     " leave no KV cache (try a larger --tp or --pp, a narrower --dtype, or a smaller "
                     "--max-batched-tokens)");
  return blocks;
}

Replica make_replica(const StepSynthesizer& step, const synth::SynthOptions& base, const GpuSpec& gpu,
                     const LoadedModel& lm, const GpuDatabase& db, const EngineConfig& per_rank, const std::string& what) {
  Replica r;
  r.per_rank = per_rank;
  r.cost = std::make_unique<IterationCost>(step, base, gpu, lm, db, per_rank.graph_max_tokens);
  r.cost->set_pipeline_stages(per_rank.pipeline_stages);  // memory per GPU: 1 / pp of the weights and cache
  r.rank_blocks = kv_cache_blocks(gpu, per_rank, *r.cost, what);
  r.engine = per_rank;
  r.engine.max_num_seqs *= r.cost->ranks();
  r.engine.max_batched_tokens *= r.cost->ranks();
  r.engine.ranks = r.cost->ranks();
  r.blocks = r.rank_blocks * r.cost->ranks();
  return r;
}

void check_fits_one_rank(const Replica& r, const std::vector<Request>& reqs) {
  if (r.cost->ranks() <= 1) return;
  const int64_t tokens = r.rank_blocks * r.engine.block_size;
  for (const Request& q : reqs)
    if (q.input + q.output > tokens)
      throw InputError("serve: a request of " + std::to_string(q.input) + " + " + std::to_string(q.output) +
                       " tokens exceeds one GPU's KV cache under --attention-dp (" + std::to_string(tokens) + " tokens)");
}

}  // namespace kcast::serve
