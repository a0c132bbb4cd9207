#include "predict/cli/commands.h"

namespace kcast::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table{
      {"gpus", cmd_gpus, "list the GPU database, or show one GPU"},
      {"classify", cmd_classify, "classify kernel names (one per line)"},
      {"import", cmd_import, "convert a trace (nsys, ncu, PyTorch profiler) to a kernel list"},
      {"calibrate", cmd_calibrate, "fit the cost model to measurements and microbenchmarks"},
      {"predict", cmd_predict, "predict a kernel list's time on one or more GPUs"},
      {"whatif", cmd_whatif, "predict on a modified GPU; sweep a hardware knob"},
      {"validate", cmd_validate, "accuracy report on measured data (held-out GPUs)"},
      {"synth", cmd_synth, "synthesize the kernel list of a named model"},
      {"serve", cmd_serve, "simulate LLM serving under load (continuous batching)"},
      {"plan", cmd_plan, "find the best parallel layout for a training run"},
  };
  return table;
}

const Command* find_command(std::string_view name) {
  for (const Command& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace kcast::cli
