// A small fork-join loop for the few places that split independent work over the cores (targets of a
// prediction, layouts of a plan, chunks of a large kernel list).
#pragma once
#include <cstddef>
#include <functional>

namespace kcast {

// Runs fn(i) for i in [0, n) on up to max_threads threads (0: hardware_concurrency); rethrows the
// first exception.
void parallel_for(size_t n, unsigned max_threads, const std::function<void(size_t)>& fn);

}  // namespace kcast
