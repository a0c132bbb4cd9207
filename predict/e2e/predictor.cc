#include "predict/e2e/predictor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "model/error.h"
#include "model/inferred_work.h"
#include "predict/e2e/step_time.h"
#include "model/transfer.h"

namespace kcast {

namespace {

struct TupleHash {
  size_t operator()(const std::tuple<uint32_t, int16_t, bool, int64_t>& t) const {
    uint64_t h = uint64_t(std::get<0>(t)) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t(uint16_t(std::get<1>(t))) << 1 | uint64_t(std::get<2>(t))) * 0xC2B2AE3D27D4EB4Full;
    h ^= uint64_t(std::get<3>(t)) * 0x165667B19E3779F9ull;
    return size_t(h ^ (h >> 29));
  }
};

// Context floors, looked up once per kind (the context is a field of the kernel a row launched).
void add_context_floors(PreparedWorkload& w, const KernelRows& rows, const LoadedModel& lm) {
  std::vector<double> kind_us(rows.kind_count(), 0.0), kind_bytes(rows.kind_count(), 0.0);
  bool any_context = false, any_bytes = false;
  for (size_t i = 0; i < rows.kind_count(); ++i) {
    const Kernel& k = rows.kind_at(i);
    if (k.context.empty()) continue;
    any_context = true;
    kind_us[i] = lm.model.params().context_overhead(k.context);
    kind_bytes[i] = std::max(0.0, lm.model.context_pass_bytes(k));
    any_bytes |= kind_bytes[i] > 0;
  }
  if (!any_context) return;
  w.context_us.resize(rows.size());
  if (any_bytes) w.context_pass_bytes.resize(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    w.context_us[r] = kind_us[rows.kind_of(r)];
    if (any_bytes) w.context_pass_bytes[r] = kind_bytes[rows.kind_of(r)];
  }
}

// Source GPUs of measured rows.
void assign_sources(PreparedWorkload& w, const KernelRows& rows, const LoadedModel& lm, const GpuDatabase& db,
                    const E2eOptions& opt, const std::string& file) {
  w.source_of_row.assign(rows.size(), -1);
  if (opt.mode != PredictMode::absolute) {
    std::map<std::string, int16_t> index;  // as written in the file -> source
    std::vector<int16_t> of_kind(rows.kind_count(), -2);  // the gpu is a field of the kind; -2: not looked up
    std::string last;
    int16_t last_idx = -1;
    for (size_t r = 0; r < rows.size(); ++r) {
      const Kernel& k = rows.kind(r);
      const double duration_us = rows.duration_us(r);
      // A zero duration is no measurement to scale (it would predict zero on every GPU).
      if (!(duration_us > 0) || k.gpu.empty()) {
        if (opt.mode == PredictMode::transfer)
          throw InputError(file + ": data row " + std::to_string(r + 1) + " ('" + k.name + "'): transfer mode needs " +
                           (duration_us > 0 ? "column 'gpu'" : "a positive 'duration_us'") +
                           " (use --mode auto to predict unmeasured rows absolutely)");
        continue;
      }
      if (int16_t& known_source = of_kind[rows.kind_of(r)]; known_source >= 0) {
        w.source_of_row[r] = known_source;
        continue;
      }
      if (k.gpu != last) {
        auto it = index.find(k.gpu);
        if (it == index.end()) {
          const GpuSpec* spec = db.find(k.gpu);
          if (!spec) {
            try {
              spec = &db.resolve(k.gpu);
            } catch (const InputError& e) {
              throw InputError(file + ": data row " + std::to_string(r + 1) + ": column 'gpu': " + e.what());
            }
          }
          auto same = std::find(w.sources.begin(), w.sources.end(), spec->name);
          int16_t idx = int16_t(same - w.sources.begin());
          if (same == w.sources.end()) {
            if (w.sources.size() >= 32000) throw InputError(file + ": too many distinct source GPUs");
            w.sources.push_back(spec->name);
            w.source_caps.push_back(lm.caps_for(*spec));
          }
          it = index.emplace(k.gpu, idx).first;
        }
        last = k.gpu;
        last_idx = it->second;
      }
      w.source_of_row[r] = of_kind[rows.kind_of(r)] = last_idx;
    }
  }
}

// Measured rows without work get what their measurement implies (model/inferred_work.h). Rows that
// the model cannot tell apart, from the same source, whose GPU times agree to 2^-10 (0.07%), share
// one inference at the bucket's time and then count as one kernel: a trace of a million launches of
// a few hundred kernels costs a few thousand inferences and predictions per GPU. Transfer still
// scales each row's own measurement by the model's ratio, so a measurement on its own GPU is
// reproduced exactly.
void find_distinct_kernels(PreparedWorkload& w, const KernelRows& rows, const LoadedModel& lm,
                           const E2eOptions& opt) {
  const UniqueKernels same = dedupe_kernels(rows);
  std::vector<int32_t> bucket_of;  // per row, -1: none; empty while no row has one
  struct Bucket {
    size_t rep;
    double gpu_us;
    Kernel inferred;
  };
  std::vector<Bucket> buckets;
  {
    std::unordered_map<std::tuple<uint32_t, int16_t, bool, int64_t>, uint32_t, TupleHash> index;
    for (size_t r = 0; r < rows.size(); ++r) {
      const int16_t s = w.source_of_row[r];
      if (s < 0 || !lacks_work(rows.kind(r))) continue;
      const GpuCaps& src = w.source_caps[s];
      const double ctx = w.context_us.empty() ? 0.0 : w.context_us[r] * src.context_scale;
      const double gpu_us = measured_gpu_time(rows.duration_us(r), ctx, src.launch_floor_us);
      const int64_t b = std::llround(std::log2(gpu_us) * 1024.0);
      auto [it, fresh] = index.try_emplace({same.of_row[r], s, infers_flops(rows.kind(r)), b}, uint32_t(buckets.size()));
      if (fresh) buckets.push_back({r, std::exp2(double(b) / 1024.0), {}});
      if (bucket_of.empty()) bucket_of.assign(rows.size(), -1);
      bucket_of[r] = int32_t(it->second);
    }
  }
  constexpr size_t kChunk = 256;
  parallel_for((buckets.size() + kChunk - 1) / kChunk, opt.max_threads, [&](size_t c) {
    for (size_t i = c * kChunk; i < std::min(buckets.size(), (c + 1) * kChunk); ++i) {
      Bucket& bk = buckets[i];
      bk.inferred = with_inferred_work(rows.row(bk.rep), bk.gpu_us, w.source_caps[w.source_of_row[bk.rep]], lm.model);
    }
  });
  // The distinct kernels: the model-identical groups, a bucket with inferred work its own group.
  {
    std::vector<int64_t> group_id(same.rep.size() + buckets.size(), -1);
    w.uniq.of_row.resize(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
      const int32_t bucket = bucket_of.empty() ? -1 : bucket_of[r];
      const bool inferred = bucket >= 0 && !lacks_work(buckets[size_t(bucket)].inferred);
      const size_t g = inferred ? same.rep.size() + size_t(bucket) : same.of_row[r];
      if (group_id[g] < 0) {
        group_id[g] = int64_t(w.uniq.rep.size());
        w.uniq.rep.push_back(uint32_t(r));
        w.kernels.push_back(inferred ? buckets[size_t(bucket)].inferred : rows.row(r));
      }
      w.uniq.of_row[r] = uint32_t(group_id[g]);
      const Kernel& k = rows.kind(r);
      w.network_rows += k.net_bytes > 0;
      w.link_rows += k.cls == KernelClass::communication || (k.cls == KernelClass::memcpy && k.copy == CopyKind::peer);
      if (inferred) {
        ++w.inferred_work_rows;
      } else if (lacks_work(k) && w.source_of_row[r] < 0) {
        if (w.unknown_work_rows++ == 0) w.first_unknown_work_row = r;
      }
    }
  }
}

// Source predictions, only for the distinct kernels each source measured.
void predict_on_sources(PreparedWorkload& w, const KernelRows& rows, const LoadedModel& lm,
                        const E2eOptions& opt) {
  w.source_pred.resize(w.sources.size());
  parallel_for(w.sources.size(), opt.max_threads, [&](size_t s) {
    std::vector<uint8_t> needed(w.uniq.rep.size(), 0);
    for (size_t r = 0; r < rows.size(); ++r)
      if (w.source_of_row[r] == int16_t(s)) needed[w.uniq.of_row[r]] = 1;
    auto& pred = w.source_pred[s];
    pred.resize(w.uniq.rep.size());
    for (size_t u = 0; u < needed.size(); ++u)
      if (needed[u]) pred[u] = lm.model.predict(w.kernels[u], w.source_caps[s]);
  });
}

// The share of row r's time on `gpu` that is its measurement context: the rig's floor and the extra
// kernel its context's op runs there, if any.
double context_on(const PreparedWorkload& w, size_t r, const GpuCaps& gpu) {
  const double ctx_base = w.context_us.empty() ? 0.0 : w.context_us[r];
  const double pass_bytes = w.context_pass_bytes.empty() ? 0.0 : w.context_pass_bytes[r];
  return ctx_base * gpu.context_scale + (pass_bytes > 0 ? w.model->operand_pass_us(pass_bytes, gpu) : 0.0);
}

// The logs persistent_measurement takes, once per measured GEMM and convolution (RowFacts).
void add_persistence_logs(PreparedWorkload& w) {
  for (size_t r = 0; r < w.rows.size(); ++r) {
    const PreparedWorkload::RowFacts f = w.facts(r);
    const int s = w.source_of_row[r];
    if (s < 0 || !persistence_param(f.cls)) continue;
    const double predicted = w.source_pred[size_t(s)][w.uniq.of_row[r]].time_us + context_on(w, r, w.source_caps[s]);
    if (!(predicted > 0) || !(f.duration_us > 0)) continue;
    if (w.row_logs.empty()) w.row_logs.assign(w.rows.size(), {kUnknown, kUnknown});
    w.row_logs[r] = {std::log(f.duration_us), std::log(predicted)};
  }
}

// The measured kernel time and step time, when every row is measured.
void add_measured_totals(PreparedWorkload& w, const KernelRows& rows) {
  double measured = 0;
  bool all_measured = true;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (!known(rows.duration_us(r))) {
      all_measured = false;
      break;
    }
    measured += rows.count(r) * rows.duration_us(r);
  }
  if (all_measured) {
    w.measured_kernel_us = measured;
    w.measured_step_us = w.has_timeline() ? measured_step_time(w.replay, rows) : measured;
  }
}

}  // namespace

PreparedWorkload prepare_workload(const KernelRows& rows, const LoadedModel& lm, const GpuDatabase& db,
                                  const E2eOptions& opt, const std::string& file) {
  PreparedWorkload w;
  w.file = file;
  w.rows = rows;
  w.model = &lm.model;
  w.opt = opt;
  auto rest = [&] {
    if (!rows.is_table()) {
      w.row_facts.reserve(rows.size());
      for (size_t r = 0; r < rows.size(); ++r) w.row_facts.push_back({rows.count(r), rows.duration_us(r), rows.kind(r).cls});
    }
    add_context_floors(w, rows, lm);
    assign_sources(w, rows, lm, db, opt, file);
    find_distinct_kernels(w, rows, lm, opt);
    predict_on_sources(w, rows, lm, opt);
    add_persistence_logs(w);
  };
  // The replay's timeline depends on nothing else here: on a large trace it is built beside the rest
  // (both mostly first-touch fresh memory, which a second core halves). Small lists, which `kcast
  // plan` prepares by the thousand, stay on one thread.
  constexpr size_t kBesideRows = 1 << 16;
  if (rows.size() >= kBesideRows) {
    parallel_for(2, opt.max_threads, [&](size_t part) {
      if (part == 0) w.replay = replay_timeline(rows);
      else rest();
    });
  } else {
    w.replay = replay_timeline(rows);
    rest();
  }
  add_measured_totals(w, rows);
  return w;
}

std::string unknown_work_warning(const PreparedWorkload& w, const std::string& file) {
  if (w.unknown_work_rows == 0) return "";
  const Kernel& k = w.rows.kind(w.first_unknown_work_row);
  return file + ": " + std::to_string(w.unknown_work_rows) + " of " + std::to_string(w.rows.size()) +
         " rows have no work (shape, flops or bytes) and " +
         (w.opt.mode == PredictMode::absolute ? std::string("absolute mode does not infer it from measured durations")
                                              : std::string("no measured duration to infer it from")) +
         ", e.g. data row " +
         std::to_string(w.first_unknown_work_row + 1) + " ('" + k.name + "', " + std::string(to_string(k.cls)) +
         "): they are predicted at the launch floor";
}

void require_interconnect(const PreparedWorkload& w, const GpuCaps& gpu) {
  auto missing = [&](size_t rows, const char* what, const char* column) {
    throw InputError(w.file + ": " + std::to_string(rows) + " rows " + what + " and GPU '" + gpu.name + "' has no " +
                     column + " in the GPU database (a KCAST_GPUS row without that column?): add it, in GB/s per " +
                     "direction (data/gpus.md), to time them");
  };
  if (w.link_rows > 0 && !(gpu.link_gbps > 0))
    missing(w.link_rows, "cross the GPU-to-GPU link (collectives, peer copies)", "link_gbps");
  if (w.network_rows > 0 && !(gpu.net_gbps > 0))
    missing(w.network_rows, "send bytes between nodes (net_bytes)", "net_gbps");
}

std::vector<KernelPrediction> predict_unique(const PreparedWorkload& w, const GpuCaps& caps) {
  std::vector<KernelPrediction> out(w.uniq.rep.size());
  for (size_t u = 0; u < out.size(); ++u) out[u] = w.model->predict(w.kernels[u], caps);
  return out;
}

GpuPrediction evaluate_target(const PreparedWorkload& w, const std::string& gpu, const GpuCaps& caps,
                              const std::vector<KernelPrediction>& target_pred, double host_gap_scale) {
  const KernelRows& rows = w.rows;
  const E2eOptions& opt = w.opt;
  GpuPrediction g;
  g.gpu = gpu;
  g.mode = opt.mode;
  g.rows = rows.size();
  g.timeline = w.has_timeline();
  const bool keep_times = opt.keep_rows || g.timeline;
  // Row times the replay alone reads go to this thread's scratch, used again for its next target:
  // fresh per target they were 8 MB of new pages a GPU on a million rows, which cost more than
  // computing them.
  thread_local std::vector<double> scratch_us;
  std::vector<double>& row_us = opt.keep_rows ? g.row_us : scratch_us;
  if (keep_times) row_us.resize(rows.size());
  if (opt.keep_rows) g.row_bound.resize(rows.size()), g.row_transferred.resize(rows.size());
  std::vector<uint8_t> source_used(w.sources.size(), 0);
  const double floor_t = caps.launch_floor_us;
  const double blend = w.model->params()[kFloorBlend];
  // Per source GPU and class, not per row: the share of a measured deviation from the model kept here.
  std::vector<std::array<double, kNumClasses>> persistence(w.sources.size());
  for (size_t s = 0; s < w.sources.size(); ++s)
    for (KernelClass c : kAllClasses)
      persistence[s][size_t(c)] = bias_persistence(c, w.source_caps[s], caps, w.model->params());

  for (size_t r = 0; r < rows.size(); ++r) {
    const PreparedWorkload::RowFacts k = w.facts(r);
    const uint32_t u = w.uniq.of_row[r];
    const KernelPrediction& p = target_pred[u];
    // The row's context on the target's rig (and, for a measured row, on the source's).
    const double ctx = context_on(w, r, caps);
    const int s = w.source_of_row[r];
    double t;
    Bound b = p.bound;
    if (s >= 0) {
      const KernelPrediction& ps = w.source_pred[s][u];
      const double ctx_s = context_on(w, r, w.source_caps[s]);
      // Across compute capabilities a GEMM or a convolution keeps only the share of its deviation from
      // the model that persists there (model/transfer.h); anything else, the measurement itself.
      const double pers = persistence[size_t(s)][size_t(k.cls)];
      const double d = w.row_logs.empty()
                           ? persistent_measurement(k.duration_us, ps.time_us + ctx_s, pers)
                           : persistent_measurement(k.duration_us, ps.time_us + ctx_s, w.row_logs[r][0], w.row_logs[r][1], pers);
      const double m_t = transfer_measurement(d, ctx_s, ctx, ps.time_us, p.time_us, floor_t);
      if (m_t > d * transfer_ratio(ctx_s, ctx, ps.time_us, p.time_us)) b = Bound::launch;  // held at the floor
      const double gpu = measured_gpu_time(m_t, ctx, floor_t);
      const double floor_s = w.source_caps[s].launch_floor_us;
      const double t_gpu =
          opt.cuda_graph
              ? transferred_graph_time(measured_gpu_time(d, ctx_s, floor_s), floor_s, ps.time_us, p.time_us, floor_t, blend)
              : gpu;
      // With the context kept, the measurement itself (bit for bit when nothing moves).
      t = opt.with_context && ctx > 0 ? m_t + (t_gpu - gpu) : t_gpu;
      source_used[s] = 1;
      ++g.transferred_rows;
    } else {
      t = opt.cuda_graph ? graph_time(p.time_us, floor_t, blend) : p.time_us;
      if (opt.with_context) t += ctx;
    }
    const double busy = k.count * t;
    g.kernel_us += busy;
    g.invocations += k.count;
    g.by_class_bound[int(k.cls)][int(b)] += busy;
    ++g.class_rows[int(k.cls)];
    if (keep_times) row_us[r] = t;
    if (opt.keep_rows) g.row_bound[r] = uint8_t(b), g.row_transferred[r] = s >= 0;
  }
  for (size_t s = 0; s < w.sources.size(); ++s)
    if (source_used[s]) g.source_gpus.push_back(w.sources[s]);
  g.step_us = g.timeline ? replay_step_time(w.replay, row_us, ReplayOptions{opt.cuda_graph, host_gap_scale}) : g.kernel_us;
  return g;
}

std::vector<GpuPrediction> predict_targets(const PreparedWorkload& w, const std::vector<Target>& targets) {
  for (const Target& t : targets) require_interconnect(w, t.caps);
  std::vector<GpuPrediction> out(targets.size());
  parallel_for(targets.size(), w.opt.max_threads, [&](size_t i) {
    out[i] = evaluate_target(w, targets[i].name, targets[i].caps, predict_unique(w, targets[i].caps));
  });
  return out;
}

double GpuPrediction::by_class(KernelClass c) const {
  double s = 0;
  for (double t : by_class_bound[int(c)]) s += t;
  return s;
}

double GpuPrediction::by_bound(Bound b) const {
  double s = 0;
  for (const auto& v : by_class_bound) s += v[int(b)];
  return s;
}

}  // namespace kcast
