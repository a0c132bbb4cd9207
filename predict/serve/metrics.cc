#include "predict/serve/metrics.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "predict/report/text_util.h"

namespace kcast::serve {

namespace {

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * double(sorted.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - double(lo));
}

std::string load_kind(const Load& l) { return l.concurrency > 0 ? "concurrency" : "request_rate"; }

double itl_of(const RequestResult& r) {
  return r.output > 1 ? (r.finish_s - r.first_token_s) / double(r.output - 1) : std::nan("");
}

}  // namespace

Stat stat_of(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  Stat s;
  if (v.empty()) return {std::nan(""), std::nan(""), std::nan(""), std::nan("")};
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  s.p50 = percentile(v, 0.50);
  s.p90 = percentile(v, 0.90);
  s.p99 = percentile(v, 0.99);
  return s;
}

nlohmann::json stat_json(const Stat& s) { return {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}}; }

double at_percentile(const Stat& s, int percentile) {
  return percentile == 50 ? s.p50 : percentile == 90 ? s.p90 : s.p99;
}

LoadPoint summarize(const SimResult& r, const std::string& gpu, const Load& load, const Slo& slo, int64_t kv_blocks,
                    int64_t block_size, int64_t warmup) {
  LoadPoint p;
  p.warmup = std::min<int64_t>(warmup, int64_t(r.requests.size()) - 1);
  p.gpu = gpu;
  p.load = load;
  p.requests = int64_t(r.requests.size());
  std::vector<double> ttft, itl, e2e;
  double out_tokens = 0, in_tokens = 0;
  int64_t good = 0;
  for (size_t k = 0; k < r.requests.size(); ++k) {
    const RequestResult& q = r.requests[k];
    out_tokens += double(q.output);
    in_tokens += double(q.input);
    if (int64_t(k) < p.warmup) continue;
    const double t = (q.first_token_s - q.arrival_s) * 1e3, i = itl_of(q) * 1e3;
    ttft.push_back(t);
    itl.push_back(i);
    e2e.push_back((q.finish_s - q.arrival_s) * 1e3);
    const bool ok_ttft = slo.ttft_ms <= 0 || t <= slo.ttft_ms;
    const bool ok_itl = slo.itl_ms <= 0 || std::isnan(i) || i <= slo.itl_ms;
    good += ok_ttft && ok_itl;
  }
  p.ttft_ms = stat_of(ttft);
  p.itl_ms = stat_of(itl);
  p.tpot_ms = p.itl_ms;
  p.e2e_ms = stat_of(e2e);
  p.duration_s = r.stats.end_s;
  if (p.duration_s > 0) {
    p.output_tokens_per_s = out_tokens / p.duration_s;
    p.total_tokens_per_s = (out_tokens + in_tokens) / p.duration_s;
    p.requests_per_s = double(p.requests) / p.duration_s;
    // Goodput: the share of measured requests meeting the SLOs, at the run's request rate.
    if (slo.ttft_ms > 0 || slo.itl_ms > 0)
      p.goodput_requests_per_s = p.requests_per_s * double(good) / double(p.requests - p.warmup);
  }
  p.kv_blocks = kv_blocks;
  p.block_size = block_size;
  p.iterations = r.stats.iterations;
  p.preemptions = r.stats.preemptions;
  p.max_running = r.stats.max_running;
  return p;
}

nlohmann::json load_point_json(const LoadPoint& p, const Slo& slo, const nlohmann::json& inputs) {
  nlohmann::json j = inputs;
  j["gpu"] = p.gpu;
  if (p.load.concurrency > 0) j["concurrency"] = p.load.concurrency;
  else if (p.load.infinite_rate) j["request_rate"] = "inf";
  else if (p.load.dataset_arrivals) j["request_rate"] = "dataset";
  else j["request_rate"] = p.load.rate;
  j["requests"] = p.requests;
  j["warmup_requests"] = p.warmup;
  j["ttft_ms"] = stat_json(p.ttft_ms);
  j["itl_ms"] = stat_json(p.itl_ms);
  j["tpot_ms"] = stat_json(p.tpot_ms);
  j["e2e_ms"] = stat_json(p.e2e_ms);
  j["output_tokens_per_s"] = p.output_tokens_per_s;
  j["total_tokens_per_s"] = p.total_tokens_per_s;
  j["requests_per_s"] = p.requests_per_s;
  j["goodput_requests_per_s"] = p.goodput_requests_per_s >= 0 ? nlohmann::json(p.goodput_requests_per_s) : nlohmann::json();
  j["slo_ttft_ms"] = slo.ttft_ms > 0 ? nlohmann::json(slo.ttft_ms) : nlohmann::json();
  j["slo_itl_ms"] = slo.itl_ms > 0 ? nlohmann::json(slo.itl_ms) : nlohmann::json();
  j["duration_s"] = p.duration_s;
  j["kv_cache_blocks"] = p.kv_blocks;
  j["kv_cache_tokens"] = p.kv_blocks * p.block_size;
  j["iterations"] = p.iterations;
  j["preemptions"] = p.preemptions;
  j["max_running"] = p.max_running;
  return j;
}

void write_table(const std::vector<LoadPoint>& pts, std::ostream& os) {
  using report::fixed;
  os << "gpu            load          TTFT mean   p99 (ms)   ITL mean   p99 (ms)   E2E mean (ms)   out tok/s      req/s  goodput/s\n";
  for (const LoadPoint& p : pts) {
    std::string g = p.gpu, l = (p.load.concurrency > 0 ? "conc " : "rate ") + p.load.label;
    g.resize(std::max<size_t>(g.size(), 14), ' ');
    l.resize(std::max<size_t>(l.size(), 12), ' ');
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s %s %11s %9s %10s %10s %15s %11s %10s %10s\n", g.c_str(), l.c_str(),
                  fixed(p.ttft_ms.mean, 1).c_str(), fixed(p.ttft_ms.p99, 1).c_str(), fixed(p.itl_ms.mean, 2).c_str(),
                  fixed(p.itl_ms.p99, 2).c_str(), fixed(p.e2e_ms.mean, 0).c_str(), fixed(p.output_tokens_per_s, 0).c_str(),
                  fixed(p.requests_per_s, 2).c_str(),
                  p.goodput_requests_per_s >= 0 ? fixed(p.goodput_requests_per_s, 2).c_str() : "-");
    os << buf;
  }
}

void write_csv(const std::vector<LoadPoint>& pts, std::ostream& os) {
  using report::fmt;
  os << "gpu,load_kind,load,requests";
  for (const char* m : {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"})
    for (const char* s : {"mean", "p50", "p90", "p99"}) os << "," << m << "_" << s;
  os << ",output_tokens_per_s,total_tokens_per_s,requests_per_s,goodput_requests_per_s,duration_s,preemptions\n";
  for (const LoadPoint& p : pts) {
    os << report::csv_cell(p.gpu) << "," << load_kind(p.load) << "," << p.load.label << "," << p.requests;
    for (const Stat* s : {&p.ttft_ms, &p.itl_ms, &p.tpot_ms, &p.e2e_ms})
      os << "," << fmt(s->mean) << "," << fmt(s->p50) << "," << fmt(s->p90) << "," << fmt(s->p99);
    os << "," << fmt(p.output_tokens_per_s) << "," << fmt(p.total_tokens_per_s) << "," << fmt(p.requests_per_s) << ","
       << (p.goodput_requests_per_s >= 0 ? fmt(p.goodput_requests_per_s) : "") << "," << fmt(p.duration_s) << ","
       << p.preemptions << "\n";
  }
}

void write_per_request(const std::vector<std::pair<LoadPoint, SimResult>>& runs, std::ostream& os) {
  using report::fmt;
  os << "gpu,load_kind,load,request,input_tokens,output_tokens,arrival_s,scheduled_s,first_token_s,finish_s,ttft_ms,"
        "itl_ms,e2e_ms,preemptions\n";
  for (const auto& [p, r] : runs)
    for (size_t i = 0; i < r.requests.size(); ++i) {
      const RequestResult& q = r.requests[i];
      os << report::csv_cell(p.gpu) << "," << load_kind(p.load) << "," << p.load.label << "," << i << "," << q.input
         << "," << q.output << "," << fmt(q.arrival_s) << "," << fmt(q.scheduled_s) << "," << fmt(q.first_token_s) << ","
         << fmt(q.finish_s) << "," << fmt((q.first_token_s - q.arrival_s) * 1e3) << "," << fmt(itl_of(q) * 1e3) << ","
         << fmt((q.finish_s - q.arrival_s) * 1e3) << "," << q.preemptions << "\n";
    }
}

}  // namespace kcast::serve
