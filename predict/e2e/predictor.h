// End-to-end predictor: a kernel list on one or more target GPUs, in absolute, transfer or auto mode
// (mode.h), with step time from the trace timeline (step_time.h) and per-class / per-bound totals.
//
// Work is shared across targets: identical kernels are predicted once per GPU (kernel_dedupe.h), the
// source-GPU predictions that transfer mode divides by are computed once, and targets run in
// parallel, one std::thread per GPU up to hardware_concurrency. Results are deterministic: each
// target's sums run in row order whatever the thread count.
#pragma once
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/model_file.h"
#include "model/cost_model.h"
#include "model/gpu_database.h"
#include "model/parallel_for.h"
#include "predict/e2e/kernel_dedupe.h"
#include "predict/e2e/mode.h"
#include "predict/e2e/step_time.h"

namespace kcast {

struct E2eOptions {
  PredictMode mode = PredictMode::automatic;
  bool cuda_graph = false;    // assume CUDA-graph replay (transfer.h, step_time.h)
  bool with_context = false;  // add the measurement context's floor to rows that name a context
  bool keep_rows = false;     // keep per-row times (for --per-kernel)
  unsigned max_threads = 0;   // 0: hardware_concurrency
};

// The kernel list prepared once for any number of targets: dedupe, source GPUs and their model
// predictions, per-row context floors and the timeline order.
struct PreparedWorkload {
  KernelRows rows;  // a view: the list it was prepared from must outlive it
  // One per distinct kernel (uniq.rep): what the model predicts. A measured row that names no work
  // stands in with the work its measurement implies on its source GPU (model/inferred_work.h).
  std::vector<Kernel> kernels;
  size_t inferred_work_rows = 0;  // how many rows got their work from their measurement
  const CostModel* model = nullptr;
  E2eOptions opt;
  UniqueKernels uniq;
  std::vector<std::string> sources;                          // canonical source GPU names
  std::vector<GpuCaps> source_caps;
  std::vector<std::vector<KernelPrediction>> source_pred;    // [source][unique]
  std::vector<int16_t> source_of_row;                        // -1: predicted absolutely
  std::vector<double> context_us;                            // per row; empty when no row has one
  std::vector<double> context_pass_bytes;  // per row (CostModel::context_pass_bytes); empty when none has one
  ReplayTimeline replay;  // the rows with start_us, in start order, packed for the step-time replay
  bool has_timeline() const { return !replay.timed.empty(); }
  // What each target reads of every row, packed (evaluate_target walks all rows once per GPU): for a
  // view of full Kernels only (a table's rows are packed already; empty then). facts() reads either.
  struct RowFacts {
    double count, duration_us;
    KernelClass cls;
  };
  std::vector<RowFacts> row_facts;
  RowFacts facts(size_t r) const {
    return row_facts.empty() ? RowFacts{rows.count(r), rows.duration_us(r), rows.kind(r).cls} : row_facts[r];
  }
  // Per row, where some row is a measured GEMM or convolution (which a target of another compute
  // capability moves by a share of its deviation from the model, model/transfer.h): std::log of its
  // duration and of its source's prediction (context included), the same for every target; NaN for
  // the other rows. Empty when no row is such.
  std::vector<std::array<double, 2>> row_logs;
  double measured_kernel_us = kUnknown;  // sum of count * duration_us when every row is measured
  double measured_step_us = kUnknown;    // the trace's own step (step_time.h)
  // Rows predicted without any work (no shape, FLOPs or bytes, and no measurement to infer it from):
  // the model can only put them at the launch floor.
  size_t unknown_work_rows = 0, first_unknown_work_row = 0;
  // Collective rows that send bytes between nodes (Kernel::net_bytes > 0), and the rows that cross the
  // GPU-to-GPU link at all (collectives and peer copies).
  size_t network_rows = 0, link_rows = 0;
  std::string file;  // the kernel list's name, for messages
};

// A warning naming `file`, the count and the first such row, or "" when every row has work.
std::string unknown_work_warning(const PreparedWorkload& w, const std::string& file);
// Throws InputError naming the file, the GPU and the database column (link_gbps, net_gbps) when the
// workload has rows that cross the GPU-to-GPU link or the network between nodes and `gpu` has no such
// figure (a KCAST_GPUS row without it): never timed at some other speed without a word.
void require_interconnect(const PreparedWorkload& w, const GpuCaps& gpu);

// Throws InputError (naming `file` and the row) when transfer mode meets an unmeasured row, or when
// a row's gpu does not resolve.
PreparedWorkload prepare_workload(const KernelRows& rows, const LoadedModel& model, const GpuDatabase& db,
                                  const E2eOptions& opt, const std::string& file);
// The result points into `rows`: a temporary list would dangle.
PreparedWorkload prepare_workload(std::vector<Kernel>&&, const LoadedModel&, const GpuDatabase&, const E2eOptions&,
                                  const std::string&) = delete;
PreparedWorkload prepare_workload(KernelTable&&, const LoadedModel&, const GpuDatabase&, const E2eOptions&,
                                  const std::string&) = delete;

struct GpuPrediction {
  std::string gpu;
  PredictMode mode = PredictMode::automatic;
  size_t rows = 0, transferred_rows = 0;
  double invocations = 0;      // sum of count
  double kernel_us = 0;        // sum of count * time
  double step_us = 0;          // end-to-end (== kernel_us without a timeline)
  bool timeline = false;       // some rows carried start_us
  std::array<std::array<double, kNumBounds>, kNumClasses> by_class_bound{};  // count * time, [class][bound]
  std::array<size_t, kNumClasses> class_rows{};
  std::vector<std::string> source_gpus;  // sources actually used by transferred rows
  // Per row, only with E2eOptions::keep_rows.
  std::vector<double> row_us;
  std::vector<uint8_t> row_bound;        // Bound
  std::vector<uint8_t> row_transferred;  // 1: transfer, 0: absolute

  double by_class(KernelClass c) const;
  double by_bound(Bound b) const;
};

// Model predictions of every distinct kernel of `w` on `caps`.
std::vector<KernelPrediction> predict_unique(const PreparedWorkload& w, const GpuCaps& caps);

// One target from its distinct-kernel predictions (which whatif may assemble from several caps).
// `host_gap_scale`: the timeline's host gaps scaled so (step_time.h; 1: as measured).
GpuPrediction evaluate_target(const PreparedWorkload& w, const std::string& gpu, const GpuCaps& caps,
                              const std::vector<KernelPrediction>& target_pred, double host_gap_scale = 1.0);

struct Target {
  std::string name;
  GpuCaps caps;
};

// Every target, in parallel; results in target order.
std::vector<GpuPrediction> predict_targets(const PreparedWorkload& w, const std::vector<Target>& targets);

}  // namespace kcast
