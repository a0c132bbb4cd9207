// `kcast serve`: the scheduler's invariants on a stand-in iteration timer (limits, KV blocks,
// preemption, chunking, Little's law, determinism), and the real iteration cost against synth's
// own generation on one request.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>

#include "calibrate/model_file.h"
#include "io/gpu_database_csv.h"
#include "predict/cli/synth_time_report.h"
#include "predict/serve/engine.h"
#include "predict/serve/iteration_cost.h"
#include "predict/serve/metrics.h"
#include "predict/serve/serve_html.h"
#include "predict/serve/simulator.h"
#include "predict/serve/workload.h"
#include "tests/input_error_of.h"

namespace kcast::serve {
namespace {

using kcast::testing::input_error_of;

// An iteration costs a fixed 1 ms plus 10 us a token: enough to order events, simple to reason about.
class LinearTimer : public IterationTimer {
 public:
  void add(IterationWork& w, const SeqWork& s) const override {
    w.tokens += s.tokens;
  }
  double us(const IterationWork& w) override { return 1000 + 10 * double(w.tokens); }
};

EngineConfig engine(int64_t seqs, int64_t tokens, int64_t block = 16) {
  EngineConfig e;
  e.max_num_seqs = seqs;
  e.max_batched_tokens = tokens;
  e.block_size = block;
  return e;
}

Load closed(int64_t c) {
  Load l;
  l.concurrency = c;
  return l;
}

Load open_rate(double r) {
  Load l;
  l.rate = r;
  return l;
}

TEST(ServeSimulator, OneClientNeverWaits) {
  LinearTimer t;
  const auto reqs = fixed_requests(20, 300, 40);
  const SimResult r = simulate(reqs, closed(1), engine(64, 2048), 100000, t);
  for (const RequestResult& q : r.requests) {
    EXPECT_DOUBLE_EQ(q.scheduled_s, q.arrival_s);
    // One prefill iteration of 300 tokens, then 39 decode iterations of one token.
    EXPECT_NEAR(q.first_token_s - q.arrival_s, (1000 + 10 * 300) * 1e-6, 1e-12);
    EXPECT_NEAR(q.finish_s - q.first_token_s, 39 * (1000 + 10) * 1e-6, 1e-9);
  }
  EXPECT_EQ(r.stats.max_running, 1);
}

// Speculative decoding: a step verifies the last token and k drafts (k + 1 tokens through the model)
// and keeps (1 - a^(k+1)) / (1 - a) of them on average; never drafts past the request's last token.
TEST(ServeSimulator, SpeculativeStepsKeepTheExpectedTokens) {
  LinearTimer t;
  auto run = [&](int64_t k, double a, int64_t out) {
    EngineConfig e = engine(8, 2048);
    e.speculative_tokens = k;
    e.acceptance = a;
    return simulate(fixed_requests(1, 300, out), closed(1), e, 100000, t);
  };
  // Every draft accepted: 4 tokens a step, 100 decode tokens in 25 steps of 4 tokens each.
  SimResult r = run(3, 1.0, 101);
  EXPECT_EQ(r.stats.iterations, 1 + 25);
  EXPECT_EQ(r.stats.max_tokens, 300);
  EXPECT_NEAR(r.requests[0].finish_s - r.requests[0].first_token_s, 25 * (1000 + 10 * 4) * 1e-6, 1e-9);
  // None accepted: one token a step as without drafts, each step running 4 tokens (the last steps
  // fewer: no draft past the last token).
  r = run(3, 0.0, 101);
  EXPECT_EQ(r.stats.iterations, 1 + 100);
  const double steps_us = 97 * (1000 + 10 * 4) + (1000 + 10 * 3) + (1000 + 10 * 2) + (1000 + 10 * 1);
  EXPECT_NEAR(r.requests[0].finish_s - r.requests[0].first_token_s, steps_us * 1e-6, 1e-9);
  // 0.7: 2.533 tokens a step on average; a long output takes its expected number of steps (the last
  // few, with fewer drafts, keep fewer).
  r = run(3, 0.7, 2001);
  const double per_step = 1 + 0.7 + 0.49 + 0.343;
  EXPECT_NEAR(double(r.stats.iterations - 1), 2000 / per_step, 3.0);
  // Off (k = 0) is the plain decoder.
  r = run(0, 0.5, 41);
  EXPECT_EQ(r.stats.iterations, 1 + 40);
}

TEST(ServeSimulator, AdmissionStaysWithinTheEngineLimits) {
  LinearTimer t;
  const auto reqs = fixed_requests(300, 700, 50);
  for (int64_t seqs : {4, 32}) {
    for (int64_t tokens : {512, 4096}) {
      const SimResult r = simulate(reqs, closed(64), engine(seqs, tokens), 5000, t);
      EXPECT_LE(r.stats.max_running, seqs);
      EXPECT_LE(r.stats.max_tokens, tokens);
      EXPECT_LE(r.stats.max_blocks_used, 5000);
      EXPECT_EQ(r.stats.max_running, seqs) << "64 clients keep the engine full";
    }
  }
}

// Attention data parallelism: each rank runs the requests routed to it within its own share of the
// limits, and a new request goes to the rank holding the fewest prompt tokens (TensorRT-LLM's
// DefaultADPRouter). A timer that sees each iteration's per-rank loads checks both.
class RankRecorder : public IterationTimer {
 public:
  explicit RankRecorder(int64_t ranks) : ranks_(ranks) {}
  void add(IterationWork& w, const SeqWork& s) const override {
    w.tokens += s.tokens;
    w.ranks.resize(size_t(ranks_));
    w.ranks[size_t(s.rank)].tokens += s.tokens;
  }
  double us(const IterationWork& w) override {
    std::vector<int64_t> tokens(static_cast<size_t>(ranks_), 0);
    for (size_t r = 0; r < w.ranks.size(); ++r) tokens[r] = w.ranks[r].tokens;
    loads.push_back(tokens);
    return 1000 + 10 * double(*std::max_element(tokens.begin(), tokens.end()));
  }
  std::vector<std::vector<int64_t>> loads;  // per iteration, per rank: tokens
 private:
  int64_t ranks_;
};

TEST(ServeSimulator, AttentionDataParallelRanksRunTheirOwnRequestsWithinTheirShare) {
  RankRecorder t(4);
  EngineConfig e = engine(4 * 2, 4 * 64);  // per rank: 2 sequences, 64 tokens an iteration
  e.ranks = 4;
  const SimResult r = simulate(fixed_requests(12, 100, 5), open_rate(std::numeric_limits<double>::infinity()), e, 100000, t);
  ASSERT_FALSE(t.loads.empty());
  // The first iteration: one 100-token prompt per rank, each chunked to its rank's 64 tokens.
  EXPECT_EQ(t.loads.front(), (std::vector<int64_t>{64, 64, 64, 64}));
  for (const auto& it : t.loads)
    for (int64_t tokens : it) EXPECT_LE(tokens, 64);
  EXPECT_LE(r.stats.max_running, 8);
  for (const RequestResult& q : r.requests) EXPECT_GT(q.finish_s, q.first_token_s);
}

TEST(ServeSimulator, ChunkedPrefillSplitsALongPrompt) {
  LinearTimer t;
  const SimResult r = simulate(fixed_requests(1, 5000, 2), closed(1), engine(8, 2048), 100000, t);
  // 2048 + 2048 + 904 tokens: three iterations before the first token.
  EXPECT_NEAR(r.requests[0].first_token_s, (3 * 1000 + 10 * 5000) * 1e-6, 1e-12);
  EngineConfig whole = engine(8, 2048);
  whole.chunked_prefill = false;
  EXPECT_NE(input_error_of([&] { simulate(fixed_requests(1, 5000, 2), closed(1), whole, 100000, t); })
                .find("--max-batched-tokens"),
            std::string::npos);
}

TEST(ServeSimulator, AFullCachePreemptsAndRecomputesButReservationNeverDoes) {
  LinearTimer t;
  const auto reqs = fixed_requests(40, 200, 300);
  // 32 sequences of up to 500 tokens want 1,000 blocks; the cache has 200.
  const SimResult grow = simulate(reqs, closed(32), engine(32, 4096), 200, t);
  EXPECT_GT(grow.stats.preemptions, 0);
  EXPECT_LE(grow.stats.max_blocks_used, 200);
  for (const RequestResult& q : grow.requests) EXPECT_GT(q.finish_s, q.first_token_s);
  EngineConfig reserve = engine(32, 4096);
  reserve.reserve_whole_request = true;
  const SimResult res = simulate(reqs, closed(32), reserve, 200, t);
  EXPECT_EQ(res.stats.preemptions, 0);
  EXPECT_LE(res.stats.max_blocks_used, 200);
  EXPECT_LE(res.stats.max_running, 200 / 32) << "each request reserves its 32 blocks up front";
}

TEST(ServeSimulator, LittlesLawHoldsOnTheSimulatedQueue) {
  LinearTimer t;
  auto reqs = fixed_requests(400, 500, 100);
  const Load l = open_rate(20);
  assign_arrivals(reqs, l, 7);
  const SimResult r = simulate(reqs, l, engine(16, 2048), 100000, t);
  double w = 0;
  for (const RequestResult& q : r.requests) w += q.finish_s - q.arrival_s;
  const double lambda = double(reqs.size()) / r.stats.end_s;
  const double L = r.stats.in_system_area / r.stats.end_s;
  EXPECT_NEAR(L, lambda * w / double(reqs.size()), 1e-9 * L);
  EXPECT_GT(L, 1.0) << "the load queues";
}

// Pipeline stages: an iteration's pass takes the whole model's time, the next micro-batch starts after
// one stage's share. Here two stages: the interval half the stand-in's time, the pass all of it.
class PipelinedTimer : public LinearTimer {
 public:
  double us(const IterationWork& w) override { return LinearTimer::us(w) / 2; }
  double latency_us(const IterationWork& w) override { return LinearTimer::us(w); }
};

TEST(ServeSimulator, PipelineStagesKeepOneClientsLatencyAndRunTwoMicroBatches) {
  // One client: its tokens come a whole pass apart, as without stages (nothing else to interleave).
  PipelinedTimer pt;
  EngineConfig e = engine(64, 2048);
  e.pipeline_stages = 2;
  const auto one = fixed_requests(5, 300, 40);
  const SimResult r1 = simulate(one, closed(1), e, 100000, pt);
  for (const RequestResult& q : r1.requests) {
    EXPECT_NEAR(q.first_token_s - q.arrival_s, (1000 + 10 * 300) * 1e-6, 1e-12);
    EXPECT_NEAR(q.finish_s - q.first_token_s, 39 * (1000 + 10) * 1e-6, 1e-9);
  }
  // 128 decoding at once: two micro-batches of 64 in flight (the limit is per micro-batch), each token
  // of a sequence a pass of 64 apart, against one group running all 128 in each pass: the decode rate
  // is (1000 + 10 x 128) / (1000 + 10 x 64) times as high.
  LinearTimer t;
  const auto many = fixed_requests(128, 10, 400);
  const Load all = open_rate(std::numeric_limits<double>::infinity());
  const SimResult flat = simulate(many, all, engine(128, 2048), 100000, t);
  const SimResult piped = simulate(many, all, e, 100000, pt);
  EXPECT_LE(piped.stats.max_running, 128);
  EXPECT_NEAR(flat.stats.end_s / piped.stats.end_s, (1000 + 10 * 128.0) / (1000 + 10 * 64.0), 0.03);
  // Little's law on the pipelined queue.
  auto reqs = fixed_requests(300, 500, 100);
  const Load l = open_rate(40);
  assign_arrivals(reqs, l, 7);
  const SimResult r = simulate(reqs, l, e, 100000, pt);
  double w = 0;
  for (const RequestResult& q : r.requests) w += q.finish_s - q.arrival_s;
  const double L = r.stats.in_system_area / r.stats.end_s;
  EXPECT_NEAR(L, double(reqs.size()) / r.stats.end_s * w / double(reqs.size()), 1e-9 * L);
}

TEST(ServeSimulator, ASeedGivesOneResult) {
  LinearTimer t;
  const Load l = open_rate(5);
  auto a = fixed_requests(100, 400, 60), b = a, c = a;
  assign_arrivals(a, l, 1);
  assign_arrivals(b, l, 1);
  assign_arrivals(c, l, 2);
  const SimResult ra = simulate(a, l, engine(16, 2048), 100000, t), rb = simulate(b, l, engine(16, 2048), 100000, t),
                  rc = simulate(c, l, engine(16, 2048), 100000, t);
  for (size_t i = 0; i < ra.requests.size(); ++i) EXPECT_EQ(ra.requests[i].finish_s, rb.requests[i].finish_s);
  EXPECT_NE(ra.requests.back().arrival_s, rc.requests.back().arrival_s);
  // Poisson arrivals at rate 5 for 100 requests: the last comes near 20 s.
  EXPECT_NEAR(ra.requests.back().arrival_s, 20, 6);
}

TEST(ServeSimulator, AnInfiniteRateSendsEverythingAtOnce) {
  Load l;
  l.infinite_rate = true;
  auto reqs = fixed_requests(10, 10, 10);
  assign_arrivals(reqs, l, 0);
  for (const Request& r : reqs) EXPECT_EQ(r.arrival_s, 0);
}

TEST(ServeSimulator, ARequestLargerThanTheCacheIsRefused) {
  LinearTimer t;
  EXPECT_NE(input_error_of([&] { simulate(fixed_requests(1, 3000, 200), closed(1), engine(8, 4096), 100, t); })
                .find("KV blocks"),
            std::string::npos);
}

TEST(ServeHtml, ATableAndTwoCurvesPerGpuWithTheSlos) {
  LinearTimer t;
  std::vector<LoadPoint> pts;
  for (const char* gpu : {"H100-SXM", "B200"})
    for (int64_t c : {1, 8, 32}) {
      Load l = closed(c);
      l.label = std::to_string(c);
      const SimResult r = simulate(fixed_requests(40, 200, 20), l, engine(64, 4096), 100000, t);
      pts.push_back(summarize(r, gpu, l, Slo{}, 100000, 16, c));
    }
  Slo slo;
  slo.itl_ms = 5;
  const std::string html = serve_html(pts, slo, "llama3-8b");
  size_t polylines = 0;
  for (size_t at = html.find("<polyline"); at != std::string::npos; at = html.find("<polyline", at + 1)) ++polylines;
  EXPECT_EQ(polylines, 4u);
  EXPECT_NE(html.find("B200: inter-token latency"), std::string::npos);
  EXPECT_NE(html.find("c=32"), std::string::npos);
  EXPECT_NE(html.find("stroke-dasharray"), std::string::npos) << "the ITL objective is drawn";
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(ServeMetrics, PercentilesInterpolateLikeNumpy) {
  const Stat s = stat_of({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_DOUBLE_EQ(s.p90, 3.7);
  EXPECT_NEAR(s.p99, 3.97, 1e-12);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ServeWorkload, DatasetRowsAndTheirErrors) {
  bool arrivals = false;
  const auto ok = read_dataset(write_temp("ok.csv", "input_tokens,output_tokens,arrival_s\n100,20,0.5\n7,3,1\n"), &arrivals);
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_EQ(ok[1].input, 7);
  EXPECT_TRUE(arrivals);
  const std::string bad = write_temp("bad.csv", "input_tokens,output_tokens\n100,20\n-5,3\n");
  const std::string e = input_error_of([&] { read_dataset(bad, &arrivals); });
  EXPECT_NE(e.find("bad.csv:3"), std::string::npos) << e;
  EXPECT_NE(e.find("input_tokens"), std::string::npos) << e;
  const auto jl = read_dataset(write_temp("ok.jsonl", "{\"input_tokens\": 12, \"output_tokens\": 4}\n"), &arrivals);
  EXPECT_EQ(jl[0].output, 4);
  EXPECT_FALSE(arrivals);
  const std::string j = input_error_of(
      [&] { read_dataset(write_temp("bad.jsonl", "{\"input_tokens\": 12, \"output_tokens\": 4}\n{\"input_tokens\": 3}\n"), &arrivals); });
  EXPECT_NE(j.find("bad.jsonl:2"), std::string::npos) << j;
}

synth::SynthOptions serving(int64_t tp = 1) {
  synth::SynthOptions o;
  o.runtime = synth::Runtime::serving;
  o.attention = synth::AttentionImpl::flash;
  o.dtype = DType::bf16;
  o.tp = tp;
  return o;
}

const StepSynthesizer llama8b = [](const synth::SynthOptions& o, synth::Footprint* f) {
  return synth::synthesize("llama3-8b", o, f);
};

TEST(ServeIterationCost, OneRequestMatchesSynthsGeneration) {
  const GpuDatabase& db = default_gpu_database();
  const GpuSpec& h100 = *db.find("H100-SXM");
  const LoadedModel& lm = default_model();
  const int64_t prompt = 1024, out = 128;
  synth::SynthOptions g = serving();
  g.mode = synth::Mode::generate;
  g.batch = 1;
  g.seq = prompt;
  g.new_tokens = out;
  synth::Footprint fp;
  const auto kernels = synth::synthesize("llama3-8b", g, &fp);
  const auto timing = cli::time_synth_step(kernels, fp, g, {&h100}, lm, db, true).front();

  IterationCost cost(llama8b, serving(), h100, lm, db, 512);
  CostTimer timer(cost);
  const SimResult r = simulate(fixed_requests(1, prompt, out), closed(1), engine(256, 8192), 100000, timer);
  const RequestResult& q = r.requests[0];
  const double ttft_us = (q.first_token_s - q.arrival_s) * 1e6;
  const double itl_us = (q.finish_s - q.first_token_s) / double(out - 1) * 1e6;
  EXPECT_NEAR(ttft_us, timing.prefill_us, 0.03 * timing.prefill_us);
  EXPECT_NEAR(itl_us, timing.decode_step_us, 0.03 * timing.decode_step_us);
  // The KV cache per token: 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes.
  EXPECT_DOUBLE_EQ(cost.kv_bytes_per_token(), 32.0 * 8 * 128 * 2 * 2);
}

// The engines size the KV cache after a forward at their limits whose logits are one row a sequence
// (vLLM V1's profile_run: min(max sequences, max tokens) rows), not one a scheduled token: at 8,192
// tokens Llama 3 8B's peak is its head's (128,256 logits a row, 16-bit and the sampler's fp32 copy),
// so 1,024 sequences instead of 8,192 take 7,168 rows of it away.
TEST(ServeIterationCost, ActivationsHoldOneLogitsRowPerSequence) {
  const GpuDatabase& db = default_gpu_database();
  const IterationCost cost(llama8b, serving(), *db.find("H100-SXM"), default_model(), db, 512);
  const double rows = 8192 - 1024, per_row = 128256.0 * (2 + 8);
  EXPECT_NEAR(cost.activation_bytes(8192, 8192) - cost.activation_bytes(8192, 1024), rows * per_row, 1.0);
  EXPECT_LT(cost.activation_bytes(8192, 1024), 2e9);  // was 10.5 GB when every token's row counted
}

// Under attention data parallelism the ranks meet at every layer's expert exchange, so an iteration
// lasts as long as its busiest rank: one rank prefilling 512 tokens while three idle costs more than
// the same 512 tokens spread 128 to a rank, and no less than that rank's own rows with the others'.
TEST(ServeIterationCost, AttentionDataParallelIterationIsItsBusiestRanks) {
  const GpuDatabase& db = default_gpu_database();
  synth::SynthOptions base = serving();
  base.dp = 4, base.ep = 4;
  const StepSynthesizer qwen = [](const synth::SynthOptions& o, synth::Footprint* f) {
    return synth::synthesize("qwen3-30b-a3b", o, f);
  };
  IterationCost cost(qwen, base, *db.find("H100-SXM"), default_model(), db, 0);
  ASSERT_EQ(cost.ranks(), 4);
  auto run = [&](const std::vector<int64_t>& per_rank) {
    IterationWork w;
    for (size_t r = 0; r < per_rank.size(); ++r)
      if (per_rank[r] > 0) {
        cost.add(w, SeqWork{per_rank[r], 0, int64_t(r)});
        w.sample(int64_t(r));
      }
    return cost.us(w);
  };
  const double one = run({512, 0, 0, 0}), spread = run({128, 128, 128, 128});
  EXPECT_GT(one, 1.05 * spread);  // the same under an even spread of the tokens
  EXPECT_GE(run({512, 64, 64, 64}), one);
  EXPECT_DOUBLE_EQ(run({0, 0, 512, 0}), one);  // which rank does not matter
}

TEST(ServeIterationCost, MoreTokensAndLongerContextsCostMore) {
  const GpuDatabase& db = default_gpu_database();
  IterationCost cost(llama8b, serving(), *db.find("H100-SXM"), default_model(), db, 512);
  auto decode = [&](int64_t seqs, int64_t ctx) {
    IterationWork w;
    for (int64_t i = 0; i < seqs; ++i) cost.add(w, SeqWork{1, ctx});
    w.sampled = seqs;
    return cost.us(w);
  };
  EXPECT_LT(decode(8, 1000), decode(64, 1000));
  EXPECT_LT(decode(64, 1000), decode(64, 8000));
  EXPECT_EQ(cost.graph_size(9), 16);
  EXPECT_EQ(cost.graph_size(300), 304);
  EXPECT_EQ(cost.graph_size(600), 600);
}

// Llama 4's chunked layers (three quarters of them) attend within their 8,192-position chunk: past
// one chunk a query's pairs grow only through the global quarter, and a prefill chunk's pairs with the
// cache before it too. Differences of the same query count cancel the per-query terms.
TEST(ServeIterationCost, ChunkedAttentionCountsPairsWithinTheChunk) {
  const GpuDatabase& db = default_gpu_database();
  const StepSynthesizer scout = [](const synth::SynthOptions& o, synth::Footprint* f) {
    return synth::synthesize("llama4-scout", o, f);
  };
  IterationCost cost(scout, serving(4), *db.find("H100-SXM"), default_model(), db, 512);
  auto flops = [&](int64_t tokens, int64_t cached) {
    IterationWork w;
    cost.add(w, SeqWork{tokens, cached});
    return w.attn_flops;
  };
  const double C = 8192, per_key = (flops(1, 1000) - flops(1, 100)) / 900;  // within a chunk: every layer
  ASSERT_GT(per_key, 0);
  EXPECT_NEAR((flops(1, 8192 + 100) - flops(1, 100)) / per_key, 0.25 * C, 1e-6 * C);
  EXPECT_NEAR((flops(8192, 8192) - flops(8192, 0)) / per_key, 0.25 * C * C, 1e-6 * C * C);
  // Without chunks every key counts.
  IterationCost llama(llama8b, serving(), *db.find("H100-SXM"), default_model(), db, 512);
  auto dense = [&](int64_t cached) {
    IterationWork w;
    llama.add(w, SeqWork{1, cached});
    return w.attn_flops;
  };
  EXPECT_NEAR((dense(8192 + 100) - dense(100)) / ((dense(1000) - dense(100)) / 900), C, 1e-6 * C);
}

// The draft model's steps: each one token per drafting sequence through one of the target's layers
// and its head; k steps cost k times one.
TEST(ServeIterationCost, DraftStepsAddOneLayerAndTheHeadEach) {
  const GpuDatabase& db = default_gpu_database();
  IterationCost cost(llama8b, serving(), *db.find("H100-SXM"), default_model(), db, 512);
  auto decode = [&](int64_t drafts) {
    IterationWork w;
    for (int i = 0; i < 16; ++i) {
      cost.add(w, SeqWork{1, 1000});
      if (drafts > 0) cost.add_draft(w, SeqWork{1, 1001}, drafts);
    }
    w.sampled = 16;
    return cost.us(w);
  };
  const double plain = decode(0), one = decode(1) - plain, three = decode(3) - plain;
  EXPECT_GT(one, 0);
  EXPECT_NEAR(three, 3 * one, 1e-9 * three);
  // One layer of 32 and the head: well under the whole step, more than the layer alone would be.
  EXPECT_LT(one, 0.5 * plain);
}

TEST(ServeIterationCost, TensorParallelismNotDividingHeadsIsRefused) {
  const GpuDatabase& db = default_gpu_database();
  EXPECT_NE(input_error_of([&] { IterationCost(llama8b, serving(3), *db.find("H100-SXM"), default_model(), db, 512); }),
            "");
}

}  // namespace
}  // namespace kcast::serve
