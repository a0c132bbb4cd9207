// Disaggregated prefill / decode: a request whose cache arrives with it only decodes; alone, a
// request's first token comes its cache's transfer later than on one engine and its decode takes
// exactly as long; the workers share the requests in turn; one client's requests follow each other.
#include <gtest/gtest.h>

#include <cmath>

#include "calibrate/model_file.h"
#include "io/gpu_database_csv.h"
#include "predict/serve/disaggregated.h"
#include "predict/serve/engine.h"
#include "tests/input_error_of.h"

namespace kcast::serve {
namespace {

using kcast::testing::input_error_of;

// An iteration costs a fixed 1 ms plus 10 us a token.
class LinearTimer : public IterationTimer {
 public:
  void add(IterationWork& w, const SeqWork& s) const override { w.tokens += s.tokens; }
  double us(const IterationWork& w) override { return 1000 + 10 * double(w.tokens); }
};

TEST(ServeDisaggregated, APrefilledRequestOnlyDecodes) {
  LinearTimer t;
  std::vector<Request> reqs = fixed_requests(3, 500, 20);
  for (size_t i = 0; i < reqs.size(); ++i) reqs[i].prefilled = true, reqs[i].arrival_s = 0.5 * double(i);
  Load open;
  open.dataset_arrivals = true;
  EngineConfig e;
  const SimResult r = simulate(reqs, open, e, 100000, t);
  for (const RequestResult& q : r.requests) {
    EXPECT_DOUBLE_EQ(q.first_token_s, q.arrival_s);  // its first token came with its cache
    // 19 decode iterations of one token each: no prompt token runs here.
    EXPECT_NEAR(q.finish_s - q.arrival_s, 19 * (1000 + 10) * 1e-6, 1e-9);
  }
  EXPECT_EQ(r.stats.iterations, 3 * 19);
}

struct ServeDisaggregatedLlama : ::testing::Test {
  const GpuDatabase& db = default_gpu_database();
  const GpuSpec& h100 = *db.find("H100-SXM");
  const StepSynthesizer step = [](const synth::SynthOptions& o, synth::Footprint* f) {
    return synth::synthesize("llama3-8b", o, f);
  };
  synth::SynthOptions serving() const {
    synth::SynthOptions o;
    o.runtime = synth::Runtime::serving;
    o.attention = synth::AttentionImpl::flash;
    o.dtype = DType::bf16;
    return o;
  }
  Replica replica() const {
    return make_replica(step, serving(), h100, default_model(), db, engine_defaults("vllm", h100), "llama3-8b");
  }
  static Load rate(double r) {
    Load l;
    l.rate = r;
    return l;
  }
};

TEST_F(ServeDisaggregatedLlama, AloneTheFirstTokenWaitsForItsCacheAndDecodingTakesAsLong) {
  Replica one = replica(), prefill = replica(), decode = replica();
  const Disaggregation d{1, 1, kv_link_gbps(h100, 2)};
  ASSERT_GT(d.link_gbps, 0);
  std::vector<Request> reqs = fixed_requests(1, 2000, 64);
  assign_arrivals(reqs, rate(1), 0);
  CostTimer timer(*one.cost);
  const RequestResult a = simulate(reqs, rate(1), one.engine, one.blocks, timer).requests[0];
  const RequestResult b = simulate_disaggregated(reqs, rate(1), prefill, decode, d).requests[0];
  const double transfer = kv_transfer_s(prefill, 2000, d.link_gbps);
  // 2000 tokens x 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes over the link.
  EXPECT_DOUBLE_EQ(transfer, 2000 * 131072.0 / (d.link_gbps * 1e9));
  EXPECT_NEAR(b.first_token_s - b.arrival_s, a.first_token_s - a.arrival_s + transfer, 1e-12);
  EXPECT_NEAR(b.finish_s - b.first_token_s, a.finish_s - a.first_token_s, 1e-12);
}

TEST_F(ServeDisaggregatedLlama, TheWorkersShareTheRequestsAndEveryTokenComesInOrder) {
  Replica prefill = replica(), decode = replica();
  std::vector<Request> reqs = fixed_requests(60, 1000, 50);
  assign_arrivals(reqs, rate(20), 7);
  const Disaggregation one{1, 1, kv_link_gbps(h100, 2)}, two{2, 3, kv_link_gbps(h100, 5)};
  const SimResult a = simulate_disaggregated(reqs, rate(20), prefill, decode, one);
  const SimResult b = simulate_disaggregated(reqs, rate(20), prefill, decode, two);
  for (const SimResult* r : {&a, &b}) {
    ASSERT_EQ(r->requests.size(), reqs.size());
    for (size_t i = 0; i < reqs.size(); ++i) {
      const RequestResult& q = r->requests[i];
      EXPECT_DOUBLE_EQ(q.arrival_s, reqs[i].arrival_s);
      EXPECT_GT(q.first_token_s, q.arrival_s + kv_transfer_s(prefill, 1000, one.link_gbps) * 0.999);
      EXPECT_GT(q.finish_s, q.first_token_s);
    }
  }
  // More workers split the same prompts and decodes: every iteration carries fewer of them.
  EXPECT_GT(b.stats.iterations, a.stats.iterations);
  EXPECT_LE(b.stats.max_running, a.stats.max_running);
}

// A closed loop of one client: each request is sent when the last one ends, and runs as it would alone.
TEST_F(ServeDisaggregatedLlama, OneClientSendsEachRequestWhenItsLastEnds) {
  Replica prefill = replica(), decode = replica();
  const Disaggregation d{2, 2, kv_link_gbps(h100, 4)};
  Load one;
  one.concurrency = 1;
  const SimResult r = simulate_disaggregated(fixed_requests(6, 800, 40), one, prefill, decode, d);
  std::vector<Request> alone = fixed_requests(1, 800, 40);
  assign_arrivals(alone, rate(1), 0);
  const RequestResult a = simulate_disaggregated(alone, rate(1), prefill, decode, d).requests[0];
  for (size_t i = 0; i < r.requests.size(); ++i) {
    const RequestResult& q = r.requests[i];
    if (i > 0) {
      EXPECT_DOUBLE_EQ(q.arrival_s, r.requests[i - 1].finish_s);
    }
    EXPECT_NEAR(q.first_token_s - q.arrival_s, a.first_token_s - a.arrival_s, 1e-9);
    EXPECT_NEAR(q.finish_s - q.arrival_s, a.finish_s - a.arrival_s, 1e-9);
  }
  EXPECT_EQ(r.stats.max_running, 1);
}

}  // namespace
}  // namespace kcast::serve
