#include "predict/cli/synth_batch_sweep.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "model/error.h"
#include "predict/cli/options.h"
#include "predict/report/html_page.h"
#include "predict/report/svg.h"
#include "predict/report/text_util.h"

namespace kcast::cli {

using synth::Footprint;
using synth::SynthOptions;

std::vector<int64_t> parse_batch_list(const std::string& value) {
  return parse_int_list("batch-sweep", value, 1, "a positive integer up to 16777216 (give B1,B2,...)");
}

std::vector<SweepRow> sweep_batches(const StepSynthesizer& synth, const SynthOptions& o,
                                    const std::vector<int64_t>& batches, const std::vector<const GpuSpec*>& gpus,
                                    const LoadedModel& model, const GpuDatabase& db, bool cuda_graph,
                                    double acceptance) {
  std::vector<std::vector<SweepRow>> by_batch;
  for (const int64_t b : batches) {
    SynthOptions ob = o;
    ob.batch = b;
    Footprint fp;
    std::vector<Kernel> kernels;
    try {
      kernels = synth(ob, &fp);
    } catch (const InputError& e) {
      throw InputError("option '--batch-sweep': batch " + std::to_string(b) + ": " + e.what());
    }
    const std::vector<SynthTiming> times = time_synth_step(kernels, fp, ob, gpus, model, db, cuda_graph, acceptance);
    std::vector<SweepRow> rows;
    for (size_t g = 0; g < gpus.size(); ++g) rows.push_back({b, memory_fit(fp, *gpus[g]), times[g]});
    by_batch.push_back(std::move(rows));
  }
  std::vector<SweepRow> out;
  for (size_t g = 0; g < gpus.size(); ++g)
    for (const auto& rows : by_batch) out.push_back(rows[g]);
  return out;
}

namespace {

const char* verdict(const MemoryFit& f) { return !f.capacity_known ? "?" : f.fits ? "yes" : "no"; }

std::string cell(double v, double scale, int decimals) { return known(v) ? report::fixed(v * scale, decimals) : "-"; }

}  // namespace

void render_sweep(const std::vector<SweepRow>& rows, Format fmt, std::ostream& out) {
  const std::string unit = rows.empty() ? "tokens" : rows.front().time.unit;
  if (fmt == Format::json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const SweepRow& r : rows) {
      nlohmann::json j = fit_json(r.fit);
      j["batch"] = r.batch;
      j["predicted"] = timing_json(r.time);
      arr.push_back(std::move(j));
    }
    nlohmann::json j;
    j["sweep"] = std::move(arr);
    out << j.dump(2) << "\n";
    return;
  }
  if (fmt == Format::csv) {
    out << "gpu,batch,fits,need_bytes,capacity_bytes,step_us,time_to_first_token_us,time_per_output_token_us,"
           "tokens_per_s,tokens_per_s_per_gpu,mfu,mbu,unit\n";
    for (const SweepRow& r : rows) {
      const SynthTiming& t = r.time;
      out << report::csv_cell(t.gpu) << ',' << r.batch << ',' << (r.fit.capacity_known ? (r.fit.fits ? "1" : "0") : "")
          << ',' << report::fmt(r.fit.need_bytes, 12) << ','
          << (r.fit.capacity_known ? report::fmt(r.fit.capacity_bytes, 12) : "") << ',' << report::fmt(t.step_us, 10)
          << ',' << report::fmt(t.prefill_us, 10) << ',' << report::fmt(t.decode_step_us, 10) << ','
          << report::fmt(t.tokens_per_s, 10) << ',' << report::fmt(t.tokens_per_s_per_gpu(), 10) << ','
          << report::fmt(t.mfu, 6) << ',' << report::fmt(t.mbu, 6) << ',' << t.unit << '\n';
    }
    return;
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-16s %7s %5s %9s %10s %9s %9s %12s %12s %5s %5s\n", "gpu", "batch", "fits",
                "memory GB", "step ms", "ttft ms", "tpot ms",
                (unit + "/s").c_str(), "per GPU", "MFU%", "MBU%");
  out << buf;
  for (const SweepRow& r : rows) {
    const SynthTiming& t = r.time;
    std::snprintf(buf, sizeof buf, "%-16s %7lld %5s %9s %10s %9s %9s %12s %12s %5s %5s\n", t.gpu.c_str(),
                  static_cast<long long>(r.batch), verdict(r.fit), cell(r.fit.need_bytes, 1e-9, 1).c_str(),
                  cell(t.step_us, 1e-3, 2).c_str(), cell(t.prefill_us, 1e-3, 2).c_str(),
                  cell(t.decode_step_us, 1e-3, 2).c_str(), cell(t.tokens_per_s, 1, 0).c_str(),
                  cell(t.tokens_per_s_per_gpu(), 1, 0).c_str(), cell(t.mfu, 100, 0).c_str(),
                  cell(t.mbu, 100, 0).c_str());
    out << buf;
  }
}

std::string sweep_html(const std::vector<SweepRow>& rows, const std::string& what) {
  using report::html_escape;
  std::string s = html_page_start("kcast synth --batch-sweep: " + what,
                                  "predicted in absolute mode; memory verdicts against each GPU's datasheet capacity");
  s += "<section>\n<table>\n<tr><th class=\"l\">GPU</th><th>batch</th><th>fits</th><th>memory GB</th><th>step</th>"
       "<th>time to first token</th><th>per output token</th><th>tokens/s</th><th>per GPU</th><th>MFU</th>"
       "<th>MBU</th></tr>\n";
  auto pct = [](double v) { return known(v) ? report::fixed(100 * v, 0) + "%" : std::string("-"); };
  auto time = [](double us) { return known(us) ? report::human_time(us) : std::string("-"); };
  for (const SweepRow& r : rows) {
    const SynthTiming& t = r.time;
    s += "<tr><td class=\"l\">" + html_escape(t.gpu) + "</td><td>" + std::to_string(r.batch) + "</td><td>" +
         verdict(r.fit) + "</td><td>" + cell(r.fit.need_bytes, 1e-9, 1) + "</td><td>" + time(t.step_us) +
         "</td><td>" + time(t.prefill_us) + "</td><td>" + time(t.decode_step_us) + "</td><td>" +
         cell(t.tokens_per_s, 1, 0) + "</td><td>" + cell(t.tokens_per_s_per_gpu(), 1, 0) + "</td><td>" +
         pct(t.mfu) + "</td><td>" + pct(t.mbu) + "</td></tr>\n";
  }
  s += "</table>\n</section>\n";
  // One curve per GPU (rows are GPU-major), latency on x, throughput on y.
  for (size_t i = 0; i < rows.size();) {
    const std::string gpu = rows[i].time.gpu, gpu_unit = rows[i].time.unit;
    std::vector<report::Point2> pts;
    bool decoding = false;
    for (; i < rows.size() && rows[i].time.gpu == gpu; ++i) {
      const SynthTiming& t = rows[i].time;
      decoding = known(t.decode_step_us);
      const double x = (decoding ? t.decode_step_us : t.step_us) * 1e-3;
      const bool no_fit = rows[i].fit.capacity_known && !rows[i].fit.fits;
      pts.push_back({x, t.tokens_per_s, "b=" + std::to_string(rows[i].batch) + (no_fit ? " (no fit)" : "")});
    }
    s += "<section>\n" +
         report::line_chart(gpu + ": throughput against latency", decoding ? "time per output token (ms)" : "step (ms)",
                            gpu_unit + "/s", pts, kUnknown, kUnknown, /*y_is_time=*/false) +
         "</section>\n";
  }
  return s + html_page_end();
}

}  // namespace kcast::cli
