// `kcast plan serve`: every ranked configuration meets the SLOs at the load it reports, the ranking is
// by output tokens/s per GPU, a looser SLO never lowers the best throughput, and configurations that do
// not fit are set aside with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "calibrate/model_file.h"
#include "io/gpu_database_csv.h"
#include "predict/plan/plan_serve.h"

namespace kcast::plan {
namespace {

synth::SynthOptions serving() {
  synth::SynthOptions o;
  o.runtime = synth::Runtime::serving;
  o.attention = synth::AttentionImpl::flash;
  o.dtype = DType::bf16;
  return o;
}

std::vector<ServeCandidate> run(const std::string& model, int64_t gpus, const char* gpu, double itl_ms,
                                bool request_rate = false, double ttft_ms = 400,
                                std::vector<int64_t> seq_limits = {}) {
  ServeSpace s;
  s.gpus = gpus;
  s.token_budgets = {2048, 8192};
  s.seq_limits = std::move(seq_limits);
  ServeGoal g;
  g.input = 512, g.output = 64, g.slo.ttft_ms = ttft_ms, g.slo.itl_ms = itl_ms, g.max_concurrency = 256;
  g.request_rate = request_rate, g.requests = 200;
  const GpuDatabase& db = default_gpu_database();
  const serve::StepSynthesizer step = [model](const synth::SynthOptions& o, synth::Footprint* f) {
    return synth::synthesize(model, o, f);
  };
  return plan_serve(step, serving(), enumerate_serve_layouts(s), g, "vllm", db.resolve(gpu), default_model(), db,
                    model, 2);
}

TEST(PlanServe, RankedConfigurationsMeetTheSlosBestFirst) {
  const auto all = run("llama3-8b", 2, "H100-SXM", 12);
  ASSERT_FALSE(all.empty());
  ASSERT_EQ(all.front().status, ServeCandidate::Status::ranked);
  double last = 1e300;
  for (const ServeCandidate& c : all) {
    if (c.status != ServeCandidate::Status::ranked) continue;
    EXPECT_LE(c.point.ttft_ms.p99, 400);
    EXPECT_LE(c.point.itl_ms.p99, 12);
    EXPECT_GE(c.concurrency, 1);
    EXPECT_LE(c.output_tokens_per_s_per_gpu(), last);
    last = c.output_tokens_per_s_per_gpu();
    EXPECT_EQ(c.layout.gpus_per_replica * c.layout.replicas, 2);
  }
  const auto looser = run("llama3-8b", 2, "H100-SXM", 40);
  EXPECT_GE(looser.front().output_tokens_per_s_per_gpu(), all.front().output_tokens_per_s_per_gpu());
  EXPECT_GT(looser.front().concurrency, all.front().concurrency);
}

// Under Poisson arrivals the search raises the request rate: every ranked configuration meets the SLOs
// at the rate it reports and a looser TTFT objective never lowers the rate found.
TEST(PlanServe, AnOpenLoopSearchRaisesTheRequestRate) {
  const auto all = run("llama3-8b", 2, "H100-SXM", 12, true, 60);
  ASSERT_EQ(all.front().status, ServeCandidate::Status::ranked);
  for (const ServeCandidate& c : all) {
    if (c.status != ServeCandidate::Status::ranked) continue;
    EXPECT_GT(c.request_rate, 0);
    EXPECT_EQ(c.concurrency, 0);
    EXPECT_LE(c.point.ttft_ms.p99, 60);
    EXPECT_LE(c.point.itl_ms.p99, 12);
    EXPECT_EQ(c.point.requests, 200);
  }
  const auto looser = run("llama3-8b", 2, "H100-SXM", 12, true, 200);
  EXPECT_GE(looser.front().request_rate, all.front().request_rate);
}

// Without a TTFT objective every request may arrive at once (the engines' max-throughput runs).
TEST(PlanServe, AnItlObjectiveAloneAdmitsEveryRequestAtOnce) {
  const auto all = run("llama3-8b", 1, "H100-SXM", 1000, true, 0);
  ASSERT_EQ(all.front().status, ServeCandidate::Status::ranked);
  EXPECT_TRUE(std::isinf(all.front().request_rate));
}

TEST(PlanServe, AModelThatDoesNotFitIsSetAsideWithTheReason) {
  const auto all = run("llama3-70b", 2, "L4", 100);
  for (const ServeCandidate& c : all) {
    EXPECT_EQ(c.status, ServeCandidate::Status::refused);
    EXPECT_NE(c.why.find("does not fit"), std::string::npos) << c.why;
  }
}

TEST(PlanServe, MixturesAlsoTryAttentionDataParallel) {
  ServeSpace s;
  s.gpus = 8, s.moe = true;
  int adp = 0;
  for (const ServeLayout& l : enumerate_serve_layouts(s)) {
    EXPECT_EQ(l.gpus_per_replica * l.replicas, 8);
    if (l.attention_dp) {
      ++adp;
      EXPECT_EQ(l.ep, l.gpus_per_replica);
      EXPECT_GT(l.gpus_per_replica, 1);
    }
  }
  EXPECT_EQ(adp, 3);  // 2, 4 and 8 GPUs a replica
}

// Disaggregated splits: X prefill workers of P GPUs and Y decode workers of D GPUs
// fill a group of at most a node, the groups fill the GPUs; none unless asked for.
TEST(PlanServe, DisaggregatedSplitsFillTheirGroup) {
  ServeSpace s;
  s.gpus = 16, s.disaggregated = true;
  int splits = 0;
  for (const ServeLayout& l : enumerate_serve_layouts(s)) {
    EXPECT_EQ(l.gpus_per_replica * l.replicas, 16);
    if (!l.disaggregated()) continue;
    ++splits;
    EXPECT_EQ(l.prefill_workers * l.prefill_tp + l.decode_workers * l.decode_gpus(), l.gpus_per_replica);
    EXPECT_LE(l.gpus_per_replica, 8);
    EXPECT_GE(l.decode_workers, 1);
    EXPECT_FALSE(l.attention_dp);
  }
  EXPECT_EQ(splits, 28);  // 1 split of 2 GPUs, 6 of 4, 21 of 8 (P, D in 1, 2, 4, 8)
  s.disaggregated = false;
  for (const ServeLayout& l : enumerate_serve_layouts(s)) EXPECT_FALSE(l.disaggregated());
  // A mixture's decode workers may also run attention data parallel, the experts over their GPUs.
  s.disaggregated = s.moe = true;
  int adp = 0;
  for (const ServeLayout& l : enumerate_serve_layouts(s))
    if (l.disaggregated() && l.attention_dp) {
      ++adp;
      EXPECT_EQ(l.ep, l.decode_gpus());
      EXPECT_EQ(l.tp(), 1);
      EXPECT_GT(l.decode_gpus(), 1);
    }
  EXPECT_EQ(adp, 12);  // the splits above whose decode workers have 2 or 4 GPUs: 2 of 4 GPUs, 10 of 8
}

// On 32 GPUs of 8-GPU nodes, replicas of 2 and 4 nodes run as pipeline stages of one node each.
TEST(PlanServe, ReplicasBeyondANodeArePipelinesOfWholeNodes) {
  ServeSpace s;
  s.gpus = 32;
  std::vector<int64_t> staged;
  for (const ServeLayout& l : enumerate_serve_layouts(s)) {
    EXPECT_EQ(l.gpus_per_replica * l.replicas, 32);
    EXPECT_LE(l.tp(), 8);
    if (l.pp > 1) {
      EXPECT_EQ(l.tp(), 8);
      EXPECT_FALSE(l.attention_dp);
      staged.push_back(l.pp);
    }
  }
  EXPECT_EQ(staged, (std::vector<int64_t>{2, 4}));
}

// Draft counts multiply the configurations, each with each, except pipelines (speculative decoding is
// not simulated over stages): those keep 0 drafts only.
TEST(PlanServe, DraftCountsMultiplyTheConfigurationsButPipelines) {
  ServeSpace s;
  s.gpus = 32;
  const std::vector<ServeLayout> plain = enumerate_serve_layouts(s);
  s.draft_counts = {0, 2, 4};
  const std::vector<ServeLayout> drafted = enumerate_serve_layouts(s);
  size_t pipelines = 0;
  for (const ServeLayout& l : plain) pipelines += l.pp > 1;
  ASSERT_GT(pipelines, 0u);
  EXPECT_EQ(drafted.size(), 3 * plain.size() - 2 * pipelines);
  for (const ServeLayout& l : drafted)
    if (l.pp > 1) {
      EXPECT_EQ(l.speculative_tokens, 0);
    }
  s.draft_counts = {0};
  EXPECT_EQ(enumerate_serve_layouts(s).size(), plain.size());
}

// Sequence limits multiply the configurations, each with each.
TEST(PlanServe, SequenceLimitsMultiplyTheConfigurations) {
  ServeSpace s;
  s.gpus = 8, s.moe = true, s.disaggregated = true;
  const std::vector<ServeLayout> plain = enumerate_serve_layouts(s);
  s.seq_limits = {64, 256, 1024};
  const std::vector<ServeLayout> limited = enumerate_serve_layouts(s);
  EXPECT_EQ(limited.size(), 3 * plain.size());
  std::map<int64_t, size_t> per_limit;
  for (const ServeLayout& l : limited) ++per_limit[l.max_num_seqs];
  EXPECT_EQ(per_limit, (std::map<int64_t, size_t>{{64, plain.size()}, {256, plain.size()}, {1024, plain.size()}}));
}

// A limit below the load the SLOs allow holds the running batch to it (and so serves less); limits the
// engine never reaches answer as the larger one does, which alone is kept. Each candidate records the
// limit it ran with (the engine's default where none was given).
TEST(PlanServe, ASequenceLimitCapsTheBatchAndUnreachedLimitsCollapse) {
  const auto capped = run("llama3-8b", 1, "H100-SXM", 40, false, 400, {4, 1024});
  std::set<int64_t> limits;
  double at4 = 0, at1024 = 0;
  for (const ServeCandidate& c : capped) {
    ASSERT_EQ(c.status, ServeCandidate::Status::ranked) << c.why;
    limits.insert(c.layout.max_num_seqs);
    if (c.layout.max_num_seqs == 4) {
      EXPECT_LE(c.point.max_running, 4);
      at4 = std::max(at4, c.output_tokens_per_s_per_gpu());
    } else {
      at1024 = std::max(at1024, c.output_tokens_per_s_per_gpu());
    }
  }
  EXPECT_EQ(limits, (std::set<int64_t>{4, 1024}));
  EXPECT_LT(at4, at1024);
  // The search stops at 256 clients a replica: limits of 512 and 1024 are never reached.
  const auto unreached = run("llama3-8b", 1, "H100-SXM", 40, false, 400, {512, 1024});
  const auto plain = run("llama3-8b", 1, "H100-SXM", 40, false, 400);
  ASSERT_EQ(unreached.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(unreached[i].layout.max_num_seqs, 1024);
    EXPECT_EQ(plain[i].layout.max_num_seqs, 1024);  // vLLM's default on an 80 GB GPU
    EXPECT_EQ(unreached[i].output_tokens_per_s_per_gpu(), plain[i].output_tokens_per_s_per_gpu());
  }
}

}  // namespace
}  // namespace kcast::plan
