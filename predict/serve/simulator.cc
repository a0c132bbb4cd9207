#include "predict/serve/simulator.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "predict/serve/scheduler.h"

namespace kcast::serve {

using detail::Scheduler;

SimResult simulate(const std::vector<Request>& reqs, const Load& load, const EngineConfig& engine, int64_t kv_blocks,
                   IterationTimer& timer) {
  detail::check_admissible(reqs, engine, kv_blocks);
  SimResult out;
  out.requests.resize(reqs.size());
  Scheduler eng(reqs, engine, kv_blocks, timer, out);
  const size_t n = reqs.size();
  // Open loop: requests in arrival order (ties in file order). Closed loop: in file order, as sent.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  const bool closed = load.concurrency > 0;
  if (!closed)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return reqs[a].arrival_s < reqs[b].arrival_s; });
  size_t next = 0, done = 0;
  double now = 0;
  if (closed)
    for (; next < n && next < size_t(load.concurrency); ++next) eng.arrive(order[next], 0);
  while (done < n) {
    // Open loop: every request that arrived by now waits; the time it waited within the last
    // iteration counts towards the time-average number in the system.
    for (; !closed && next < n && reqs[order[next]].arrival_s <= now; ++next) {
      out.stats.in_system_area += now - reqs[order[next]].arrival_s;
      eng.arrive(order[next], reqs[order[next]].arrival_s);
    }
    if (eng.idle()) {
      now = std::max(now, reqs[order[next]].arrival_s);  // the engine waits for the next arrival
      continue;
    }
    const double horizon = !closed && next < n ? reqs[order[next]].arrival_s : std::numeric_limits<double>::infinity();
    const size_t finished = eng.step(now, horizon).size();
    for (size_t k = 0; k < finished; ++k) {
      ++done;
      if (closed && next < n) eng.arrive(order[next++], now);  // the client sends its next request
    }
  }
  out.stats.end_s = now;
  return out;
}

}  // namespace kcast::serve
