// `kcast serve --html OUT.html`: the throughput-latency table of every GPU and load point, and per GPU
// its curves (output tokens/s against mean ITL and against p99 TTFT, each load point labelled, the SLOs
// drawn as reference lines): a self-contained page.
#pragma once
#include <string>
#include <vector>

#include "predict/serve/metrics.h"

namespace kcast::serve {

std::string serve_html(const std::vector<LoadPoint>& pts, const Slo& slo, const std::string& what);

}  // namespace kcast::serve
