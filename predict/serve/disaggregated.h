// Disaggregated prefill and decode (NVIDIA Dynamo, SGLang's PD disaggregation, vLLM's KV-transfer
// connectors, TensorRT-LLM's disaggregated serving): prefill workers run prompts only and sample each
// request's first token; the request's KV cache then moves to a decode worker, which runs it in
// decode-only iterations. Prompts no longer stall decodes (the inter-token latency is the decode
// worker's alone), at the price of the transfer and of GPUs split between two pools.
//
// Simulated as one discrete-event run of every worker's engine, each on its own clock: requests are sent
// (open loop: at their arrival times; closed loop: a client's next when its last ends) to the prefill
// workers in turn, where they end at their first token; a request's cache leaves when its prefill ends
// and lands after kv_transfer_s at the decode workers, in turn, in the order caches land. The client's
// first token arrives with the cache (TTFT = queueing + prefill + transfer); the decode worker's
// queueing falls in the first inter-token gap. Transfers are not contended (each GPU sends its own shard
// of the cache).
#pragma once
#include <cstdint>
#include <vector>

#include "predict/serve/replica.h"
#include "predict/serve/simulator.h"

namespace kcast::serve {

struct Disaggregation {
  int64_t prefill_workers = 1, decode_workers = 1;
  double link_gbps = 0;  // GB/s each GPU moves its shard of a cache at (NVLink within a node, else the NIC)
};

// The bandwidth each GPU of a deployment of `gpus` GPUs moves its shard of a cache at, GB/s: NVLink's
// (as collectives sustain it) when the deployment fits the GPU's scale-up domain (8 where unknown),
// else the network's; 0 without the figure.
double kv_link_gbps(const GpuSpec& g, int64_t gpus);

// Seconds to move the KV cache of `tokens` prompt tokens from a prefill worker: its per-GPU shard over
// the link (InputError without a link figure).
double kv_transfer_s(const Replica& prefill, int64_t tokens, double link_gbps);

// `reqs` with their open-loop arrival times set (assign_arrivals), or sent by `load.concurrency` clients.
// The result lists every request in the order of `reqs` (arrival, first token with its cache moved, last
// token); the stats add the workers' iterations and busy time, and end when the last request does.
SimResult simulate_disaggregated(const std::vector<Request>& reqs, const Load& load, Replica& prefill, Replica& decode,
                                 const Disaggregation& d);

}  // namespace kcast::serve
