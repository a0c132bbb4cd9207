// The end-to-end prediction options `kcast predict` and `kcast whatif` share (--mode, --cuda-graph,
// --with-context, --threads): declared once so the two commands cannot drift apart.
#pragma once
#include <string>

#include "predict/cli/options.h"
#include "predict/e2e/mode.h"
#include "predict/e2e/predictor.h"

namespace kcast::cli {

struct E2eCliOptions {
  std::string mode = "auto";
  bool cuda_graph = false, with_context = false;
  unsigned threads = 0;

  void add_to(po::options_description& opts) {
    opts.add_options()("mode", po::value(&mode)->default_value("auto"),
                       "auto (transfer where a row was measured), transfer, absolute")(
        "cuda-graph", po::bool_switch(&cuda_graph),
        "assume CUDA-graph replay: launch cost shrinks to the graph launch interval, host gaps vanish")(
        "with-context", po::bool_switch(&with_context),
        "add the measurement context's framework floor back to rows with a 'context'")(
        "threads", po::value(&threads)->default_value(0), "worker threads (0: one per GPU up to the core count)");
  }
  E2eOptions options() const {
    E2eOptions eo;
    eo.mode = parse_predict_mode(mode);
    eo.cuda_graph = cuda_graph;
    eo.with_context = with_context;
    eo.max_threads = threads;
    return eo;
  }
};

}  // namespace kcast::cli
