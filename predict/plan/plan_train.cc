#include "predict/plan/plan_train.h"

#include <algorithm>
#include <optional>

#include "model/error.h"
#include "predict/e2e/predictor.h"
#include "predict/report/text_util.h"

namespace kcast::plan {

namespace {

// A layout tried by the recomputation / offloading ladder: its options, memory and step.
struct Trial {
  TrainLayout layout;
  synth::SynthOptions options;
  cli::MemoryFit fit;
  synth::Footprint fp;
  std::vector<Kernel> kernels;
};

}  // namespace

std::vector<TrainCandidate> plan_train(const StepSynthesizer& step, const synth::SynthOptions& base,
                                       const std::vector<TrainLayout>& layouts, int64_t batch, const GpuSpec& gpu,
                                       const LoadedModel& lm, const GpuDatabase& db, unsigned threads,
                                       double memory_fraction, const RecomputeLadder& ladder) {
  std::vector<TrainCandidate> all(layouts.size());
  parallel_for(layouts.size(), threads, [&](size_t i) {
    TrainCandidate& c = all[i];
    c.layout = layouts[i];
    c.options = with_layout(base, layouts[i], batch);
    try {
      synth::Footprint fp;
      std::vector<Kernel> kernels = step(c.options, &fp);
      bool timed = false;
      c.fit = cli::memory_fit(fp, gpu);
      const double usable = c.fit.capacity_bytes * memory_fraction;
      auto fits = [&](const cli::MemoryFit& f) { return !f.capacity_known || f.need_bytes <= usable; };
      // A module set frees activations at most: past those the ladder is not tried.
      const double activations = c.fit.first_stage_decides ? fp.first_stage_activation_bytes : fp.activation_bytes;
      if (!fits(c.fit) && c.layout.recompute == Recompute::none && c.fit.need_bytes - activations <= usable) {
        const TrainLayout none = c.layout;
        // `l` synthesized and sized; nothing where it does not fit.
        auto trial = [&](const TrainLayout& l) -> std::optional<Trial> {
          Trial t{l, with_layout(base, l, batch), {}, {}, {}};
          t.kernels = step(t.options, &t.fp);
          t.fit = cli::memory_fit(t.fp, gpu);
          if (!fits(t.fit)) return std::nullopt;
          return t;
        };
        // The fewest of lo..hi that fits, `with(n)` the layout at n (memory falls as n grows): bisection.
        auto fewest = [&](int64_t lo, int64_t hi, const auto& with) {
          std::optional<Trial> best;
          while (lo <= hi) {
            const int64_t n = lo + (hi - lo) / 2;
            if (auto t = trial(with(n))) best = std::move(t), hi = n - 1;
            else lo = n + 1;
          }
          return best;
        };
        std::optional<Trial> recomputed;
        for (unsigned modules : ladder.modules) {
          TrainLayout l = none;
          l.recompute = Recompute::selective;
          l.modules = modules;
          if ((recomputed = trial(l))) break;
        }
        if (!recomputed && ladder.block && ladder.layers > 0) {
          // The block method: the fewest layers a chunk that fit; a whole chunk is full recomputation,
          // enumerated on its own.
          const int64_t chunks = none.pp * none.vp, chunk = (ladder.layers + chunks - 1) / chunks;
          recomputed = fewest(1, chunk - 1, [&](int64_t n) {
            TrainLayout l = none;
            l.recompute = Recompute::full;
            l.recompute_layers = n;
            return l;
          });
        }
        // Megatron's CPU activation offloading (one stage, no recomputation): the fewest layers that fit;
        // where recomputation fits too, the faster of the two is the candidate.
        std::optional<Trial> offloaded;
        if (ladder.offload && ladder.layers > 1 && none.pp == 1)
          offloaded = fewest(1, ladder.layers - 1, [&](int64_t n) {
            TrainLayout l = none;
            l.offload_layers = n;
            return l;
          });
        auto adopt = [&](Trial& t) {
          c.layout = t.layout, c.options = std::move(t.options), c.fit = t.fit;
          fp = std::move(t.fp), kernels = std::move(t.kernels);
        };
        if (recomputed && offloaded) {
          const auto time = [&](const Trial& t) {
            return cli::time_synth_step(t.kernels, t.fp, t.options, {&gpu}, lm, db, false).front();
          };
          const cli::SynthTiming r = time(*recomputed), o = time(*offloaded);
          const bool offload_wins = o.tokens_per_s_per_gpu() > r.tokens_per_s_per_gpu();
          adopt(offload_wins ? *offloaded : *recomputed);
          c.timing = offload_wins ? o : r;
          timed = true;
        } else if (recomputed || offloaded) {
          adopt(recomputed ? *recomputed : *offloaded);
        }
      }
      if (!fits(c.fit)) {
        c.status = TrainCandidate::Status::no_fit;
        c.why = "needs " + report::fixed(c.fit.need_bytes * 1e-9, 1) + " GB of " + report::fixed(usable * 1e-9, 1) +
                " GB" + (memory_fraction < 1 ? " (" + report::fixed(memory_fraction * 100, 0) + "% of " +
                                                   report::fixed(c.fit.capacity_bytes * 1e-9, 1) + ")"
                                             : "");
        return;
      }
      if (!timed) c.timing = cli::time_synth_step(kernels, fp, c.options, {&gpu}, lm, db, false).front();
    } catch (const InputError& e) {
      c.status = TrainCandidate::Status::refused;
      c.why = e.what();
    }
  });
  std::stable_sort(all.begin(), all.end(), [](const TrainCandidate& a, const TrainCandidate& b) {
    if (a.status != b.status) return int(a.status) < int(b.status);
    if (a.status != TrainCandidate::Status::ranked) return false;
    return a.timing.tokens_per_s_per_gpu() > b.timing.tokens_per_s_per_gpu();
  });
  return all;
}

}  // namespace kcast::plan
