// Transfer mode and the per-kernel time rules shared by predict and whatif.
//
// A kernel measured on a source GPU is predicted on a target as
//     t = d * model(target) / model(source)
// so whatever the model gets wrong about that kernel (a library heuristic, an odd shape) cancels in
// the ratio. Two refinements, both exact no-ops when source and target are the same GPU:
//  * Launch floor: a transferred time never drops below the target's launch floor, unless the
//    kernel was measured faster than that floor itself (then its measurement is the better floor):
//        t = max(d * r, min(d, floor_target)).
//  * Measurement context: rows with a `context` column were timed inside a framework whose floor
//    (ModelParams::context_overhead) is part of `d`; it is removed before scaling, because the model
//    predicts GPU-only kernel time:  d_gpu = max(d - ctx, min(d, floor_source)).
//    With --with-context the context is added back: t_ctx = d + (t_gpu - d_gpu), written so that
//    r == 1 returns d bit for bit.
// CUDA graphs: replaying a captured graph shrinks the per-kernel launch cost from the launch floor
// (the back-to-back launch interval of an empty kernel) to the graph launch interval, which
// published measurements put at about half of it (te42kyfo/gpu-benches gpu-small-kernels:
// A100 1.34 vs 2.6 µs, A40 1.09 vs 2.05, L40 0.94 vs 1.64, H200 1.26 vs 2.43).
#pragma once

namespace kcast {

// Graph launch interval as a fraction of the stream launch interval (see above). A GPU-specific
// measured figure would be better data; until GpuCaps carries one, this ratio is the documented default.
inline constexpr double kGraphLaunchFraction = 0.52;

// GPU-only part of a measured duration `d` taken in a context with floor `context_us`.
double measured_gpu_time(double d, double context_us, double floor_source_us);

// Transferred GPU-only time (see the header comment). model_source_us <= 0 gives ratio 1.
double transfer_time(double d_gpu, double model_source_us, double model_target_us, double floor_target_us);

// A kernel time under CUDA-graph replay: the launch floor replaced by the graph launch interval.
double graph_time(double t, double floor_us);

}  // namespace kcast
