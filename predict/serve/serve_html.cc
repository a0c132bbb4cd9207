#include "predict/serve/serve_html.h"

#include <cmath>

#include "predict/report/html_page.h"
#include "predict/report/svg.h"
#include "predict/report/text_util.h"

namespace kcast::serve {

std::string serve_html(const std::vector<LoadPoint>& pts, const Slo& slo, const std::string& what) {
  using report::fixed;
  using report::html_escape;
  std::string s = html_page_start("kcast serve: " + what, "a continuous-batching engine simulated on the cost model");
  s += "<section>\n<table>\n<tr><th class=\"l\">GPU</th><th class=\"l\">load</th><th>TTFT mean (ms)</th><th>TTFT p99</th>"
       "<th>ITL mean (ms)</th><th>ITL p99</th><th>E2E mean (ms)</th><th>output tokens/s</th><th>requests/s</th>"
       "<th>goodput/s</th></tr>\n";
  for (const LoadPoint& p : pts)
    s += "<tr><td class=\"l\">" + html_escape(p.gpu) + "</td><td class=\"l\">" +
         (p.load.concurrency > 0 ? "concurrency " : "rate ") + html_escape(p.load.label) + "</td><td>" +
         fixed(p.ttft_ms.mean, 1) + "</td><td>" + fixed(p.ttft_ms.p99, 1) + "</td><td>" + fixed(p.itl_ms.mean, 2) +
         "</td><td>" + fixed(p.itl_ms.p99, 2) + "</td><td>" + fixed(p.e2e_ms.mean, 0) + "</td><td>" +
         fixed(p.output_tokens_per_s, 0) + "</td><td>" + fixed(p.requests_per_s, 2) + "</td><td>" +
         (p.goodput_requests_per_s >= 0 ? fixed(p.goodput_requests_per_s, 2) : "-") + "</td></tr>\n";
  s += "</table>\n</section>\n";
  // Per GPU (points are GPU-major): latency against throughput, one point a load.
  const double no_ref = std::nan("");
  for (size_t i = 0; i < pts.size();) {
    const std::string gpu = pts[i].gpu;
    std::vector<report::Point2> itl, ttft;
    for (; i < pts.size() && pts[i].gpu == gpu; ++i) {
      const LoadPoint& p = pts[i];
      const std::string label = (p.load.concurrency > 0 ? "c=" : "r=") + p.load.label;
      itl.push_back({p.output_tokens_per_s, p.itl_ms.mean * 1e3, label});
      ttft.push_back({p.output_tokens_per_s, p.ttft_ms.p99 * 1e3, label});
    }
    s += "<section>\n" +
         report::line_chart(gpu + ": inter-token latency (mean) against throughput", "output tokens/s", "ITL", itl,
                            no_ref, slo.itl_ms > 0 ? slo.itl_ms * 1e3 : no_ref) +
         report::line_chart(gpu + ": time to first token (p99) against throughput", "output tokens/s", "TTFT", ttft,
                            no_ref, slo.ttft_ms > 0 ? slo.ttft_ms * 1e3 : no_ref) +
         "</section>\n";
  }
  return s + html_page_end();
}

}  // namespace kcast::serve
