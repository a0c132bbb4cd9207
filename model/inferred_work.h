// Work for a measured kernel that names none.
//
// A trace row from Nsight Systems (or a Kineto kernel whose op shapes were not recorded) carries a
// name, a launch grid and a duration, but no shape, FLOPs or bytes. The model predicts the launch
// floor for such a kernel on every GPU, so transfer mode (model/transfer.h) would move a 100 µs GEMM
// to a GPU with twice the tensor throughput by the ratio of the two floors: unchanged, reported as
// launch-bound. Instead the row gets the work its class would need, under the model, to take its
// measured time on its source GPU:
//  * GEMMs, convolutions and attention: FLOPs (at the dtype's GEMM rate: compute-bound);
//  * every other class, and cuBLAS's matrix-vector and split-K reduction kernels (named gemv /
//    splitKreduce): DRAM bytes (memory-bound, as non-GEMM kernels mostly are); for a collective, the
//    bytes it moves over the GPU-to-GPU link.
// Transfer then moves it by the model's ratio like any other row: a GEMM by the ratio of GEMM rates,
// a memory kernel by the ratio of bandwidths, a kernel at the floor stays at the target's floor; and a
// what-if knob moves it through the resource its class is bound by (a collective: link_bw). A
// collective on a GPU without a link figure in the database is left alone.
#pragma once

#include "model/cost_model.h"
#include "model/kernel.h"

namespace kcast {

// No shape, no FLOPs and no bytes: nothing the model could scale.
inline bool lacks_work(const Kernel& k) { return !k.has_shape() && !known(k.flops) && !known(k.bytes); }

// Whether the work `with_inferred_work` gives `k` is FLOPs (else bytes).
bool infers_flops(const Kernel& k);

// `k` with FLOPs or bytes such that model.predict(result, source) takes `gpu_time_us` (to 1e-3
// relative, or as close as the model's floor and latency allow). Unchanged when `k` has work, is a
// collective on a GPU without a link figure, or `gpu_time_us` is at or below what the model
// predicts for the least work (a launch-bound kernel).
Kernel with_inferred_work(const Kernel& k, double gpu_time_us, const GpuCaps& source, const CostModel& model);

}  // namespace kcast
