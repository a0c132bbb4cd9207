// The host's issue of a training step (synth_host_issue.h).
#include "predict/cli/synth_host_issue.h"

#include <algorithm>
#include <string>

#include "predict/cli/measurement_context.h"
#include "predict/synth/cuda_graph_modules.h"
#include "predict/synth/emitter.h"

namespace kcast::cli {

namespace {

bool in_layers(const std::string& name) { return !synth::repeated_layer_part(name).empty(); }
bool reads_to_host(const std::string& name) { return name.find(synth::kToHostTag) != std::string::npos; }

// Host and GPU clocks from the moment the GPU drained (both 0), after `k` launches of a row whose launch
// takes the host `h` and the GPU `d`. Launch j is issued at cpu + (j + 1) h and starts when both it is
// issued and the launch before it ended; the last ends at the latest of the GPU's own sum, the first
// launch's issue plus the k runs, and the last launch's issue plus one run (the bound is linear in j).
// Fewer than one launch per stretch (a row some stretches have) adds its share of each.
struct Race {
  double cpu = 0, gpu = 0, busy = 0;
  void issue(double k, double h, double d) {
    if (k >= 1)
      gpu = std::max({gpu + k * d, cpu + h + k * d, cpu + k * h + d});
    else
      gpu = std::max(gpu, cpu + k * h) + k * d;
    cpu += k * h;
    busy += k * d;
  }
  void drain() { cpu = std::max(cpu, gpu); }
};

}  // namespace

HostIssue host_issue(const std::vector<Kernel>& rows, const std::vector<double>& gpu_us,
                     const std::vector<double>& host_us, size_t forward_rows) {
  HostIssue out;
  if (host_us.size() != rows.size()) return out;
  // The layers' forward rows, and the backward's (with any recomputed forward): each pass of a layer is
  // one template whose rows carry count = instances x launches per instance.
  std::vector<size_t> passes[2];
  for (size_t r = 0; r < rows.size(); ++r) {
    out.host_us += rows[r].count * host_us[r];
    if (in_layers(rows[r].name)) passes[r < forward_rows ? 0 : 1].push_back(r);
  }
  std::vector<bool> raced(rows.size(), false);
  for (const std::vector<size_t>& pass : passes) {
    const auto first = std::find_if(pass.begin(), pass.end(), [&](size_t r) { return reads_to_host(rows[r].name); });
    if (first == pass.end()) continue;
    // A stretch starts after one host read and ends at the next: the rows after the first read, then
    // (the next instance) the rows up to and including it.
    const double instances = rows[*first].count;
    if (instances <= 0) continue;
    Race race;
    const size_t n = pass.size(), start = size_t(first - pass.begin()) + 1;
    for (size_t i = 0; i < n; ++i) {
      const size_t r = pass[(start + i) % n];
      raced[r] = true;
      race.issue(rows[r].count / instances, host_us[r], gpu_us[r]);
      if (reads_to_host(rows[r].name)) {
        race.drain();
        out.syncs += rows[r].count;
      }
    }
    out.exposed_us += instances * std::max(0.0, race.gpu - race.busy);
  }
  // Everything else runs without a host read: the GPU waits only where the host's issue outlasts it.
  double host = 0, gpu = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (raced[r]) continue;
    host += rows[r].count * host_us[r];
    gpu += rows[r].count * gpu_us[r];
  }
  out.exposed_us += std::max(0.0, host - gpu);
  return out;
}

std::vector<double> launch_host_us(const std::vector<Kernel>& rows, const ModelParams& params, unsigned graph_modules) {
  std::vector<double> out;
  out.reserve(rows.size());
  const double replay = params.context_overhead("neusight:add");
  bool captured_before = false;
  for (const Kernel& k : rows) {
    const bool captured = synth::in_cuda_graph(k, graph_modules);
    out.push_back(!captured ? params.context_overhead(neusight_context(k)) : captured_before ? 0.0 : replay);
    captured_before = captured;
  }
  return out;
}

}  // namespace kcast::cli
