#include "predict/plan/plan_train.h"

#include <algorithm>

#include "model/error.h"
#include "predict/e2e/predictor.h"
#include "predict/report/text_util.h"

namespace kcast::plan {

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
        const TrainLayout none_layout = c.layout;
        // The candidate becomes `l` where it fits.
        auto attempt = [&](const TrainLayout& l) {
          const synth::SynthOptions o = with_layout(base, l, batch);
          synth::Footprint f2;
          std::vector<Kernel> k2 = step(o, &f2);
          const cli::MemoryFit fit2 = cli::memory_fit(f2, gpu);
          if (!fits(fit2)) return false;
          c.layout = l, c.options = o, c.fit = fit2, fp = std::move(f2), kernels = std::move(k2);
          return true;
        };
        bool fitted = false;
        for (unsigned modules : ladder.modules) {
          TrainLayout l = c.layout;
          l.recompute = Recompute::selective;
          l.modules = modules;
          if ((fitted = attempt(l))) break;
        }
        if (!fitted && ladder.block && ladder.layers > 0) {
          // The block method: the fewest layers a chunk that fit (memory falls as they grow), found by
          // bisection; a whole chunk is full recomputation, enumerated on its own.
          const int64_t chunks = none_layout.pp * none_layout.vp, chunk = (ladder.layers + chunks - 1) / chunks;
          for (int64_t lo = 1, hi = chunk - 1; lo <= hi;) {
            TrainLayout l = none_layout;
            l.recompute = Recompute::full;
            l.recompute_layers = lo + (hi - lo) / 2;
            if (attempt(l)) hi = l.recompute_layers - 1;
            else lo = l.recompute_layers + 1;
          }
        }
        // Megatron's CPU activation offloading (one stage, no recomputation): the fewest layers that fit,
        // by bisection; where recomputation fits too, the faster of the two is the candidate.
        if (ladder.offload && ladder.layers > 1 && none_layout.pp == 1) {
          TrainCandidate off = c;
          synth::Footprint off_fp;
          std::vector<Kernel> off_kernels;
          for (int64_t lo = 1, hi = ladder.layers - 1; lo <= hi;) {
            TrainLayout l = none_layout;
            l.offload_layers = lo + (hi - lo) / 2;
            const synth::SynthOptions o = with_layout(base, l, batch);
            synth::Footprint f2;
            std::vector<Kernel> k2 = step(o, &f2);
            const cli::MemoryFit fit2 = cli::memory_fit(f2, gpu);
            if (fits(fit2)) {
              off.layout = l, off.options = o, off.fit = fit2, off_fp = std::move(f2), off_kernels = std::move(k2);
              hi = l.offload_layers - 1;
            } else {
              lo = l.offload_layers + 1;
            }
          }
          if (!off_kernels.empty()) {
            off.timing = cli::time_synth_step(off_kernels, off_fp, off.options, {&gpu}, lm, db, false).front();
            if (fits(c.fit)) c.timing = cli::time_synth_step(kernels, fp, c.options, {&gpu}, lm, db, false).front();
            if (!fits(c.fit) || off.timing.tokens_per_s_per_gpu() > c.timing.tokens_per_s_per_gpu()) c = std::move(off);
            timed = true;
          }
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
