// `kcast synth --batch-sweep B1,B2,...` with `--gpu`: the same step synthesized at each global batch,
// its memory verdict (synth_memory_report.h) and predicted time and rates (synth_time_report.h) on
// each GPU, as one table — the throughput / latency curve a serving or training run is sized by,
// up to where the memory runs out. Rendered as a table, CSV or JSON from the same rows.
#pragma once
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "predict/cli/options.h"
#include "predict/cli/synth_memory_report.h"
#include "predict/cli/synth_time_report.h"

namespace kcast::cli {

struct SweepRow {
  int64_t batch = 0;
  MemoryFit fit;
  SynthTiming time;
};

// Synthesizes one step for options `o` (its batch set by the sweep) and fills its footprint.
using StepSynthesizer = std::function<std::vector<Kernel>(const synth::SynthOptions&, synth::Footprint*)>;

// Rows GPU-major (every batch of the first GPU, then the next), batches in the order given. A batch
// the step cannot take (not divisible by the replicas, ...) is an error naming --batch-sweep.
std::vector<SweepRow> sweep_batches(const StepSynthesizer& synth, const synth::SynthOptions& o,
                                    const std::vector<int64_t>& batches, const std::vector<const GpuSpec*>& gpus,
                                    const LoadedModel& model, const GpuDatabase& db, bool cuda_graph,
                                    double acceptance = kUnknown);

// "1,8,32": positive integers; anything else is an error naming the option.
std::vector<int64_t> parse_batch_list(const std::string& value);

// Columns not applying to the mode (time to first token outside a generation, ...) read "-".
void render_sweep(const std::vector<SweepRow>& rows, Format fmt, std::ostream& out);

// One self-contained page (`synth --html`): the table, and per GPU the throughput-latency curve,
// tokens/s against the time per output token (a step where nothing is decoded), each point a batch.
std::string sweep_html(const std::vector<SweepRow>& rows, const std::string& what);

}  // namespace kcast::cli
