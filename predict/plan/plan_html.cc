#include "predict/plan/plan_html.h"

#include <cmath>

#include "predict/report/html_page.h"
#include "predict/report/svg.h"
#include "predict/report/text_util.h"

namespace kcast::plan {

namespace {

// A cell: numbers with the column's decimals, text escaped, null as "-".
std::string cell(const nlohmann::json& v, int decimals) {
  if (v.is_null()) return "-";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return report::fixed(v.get<double>(), decimals);
  return report::html_escape(v.is_string() ? v.get<std::string>() : v.dump());
}

}  // namespace

std::string plan_html(const std::string& title, const std::string& subtitle, const std::vector<HtmlColumn>& columns,
                      const nlohmann::json& list, const std::vector<std::string>& labels, const std::string& rate_key,
                      const std::string& rate_label) {
  std::string s = html_page_start(title, subtitle);
  s += "<section>\n<table>\n<tr><th>rank</th>";
  for (const HtmlColumn& c : columns) s += "<th>" + report::html_escape(c.header) + "</th>";
  s += "<th class=\"l\">command</th></tr>\n";
  std::vector<report::Point2> by_rank;
  int rank = 0;
  for (const nlohmann::json& c : list) {
    s += "<tr><td>" + std::to_string(++rank) + "</td>";
    for (const HtmlColumn& col : columns) s += "<td>" + cell(c.value(col.key, nlohmann::json()), col.decimals) + "</td>";
    s += "<td class=\"l\"><code>" + report::html_escape(c.value("command", std::string())) + "</code></td></tr>\n";
    const nlohmann::json& rate = c.value(rate_key, nlohmann::json());
    if (rate.is_number()) by_rank.push_back({double(rank), rate.get<double>(), labels.at(size_t(rank - 1))});
  }
  s += "</table>\n</section>\n";
  if (!by_rank.empty())
    s += "<section>\n" +
         report::line_chart(rate_label + " by rank", "rank", rate_label, by_rank, std::nan(""), std::nan(""), false) +
         "</section>\n";
  return s + html_page_end();
}

}  // namespace kcast::plan
