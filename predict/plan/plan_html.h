// `kcast plan train|serve --html OUT.html`: the ranked candidates as a self-contained page (the
// report frame every kcast page shares): their table, each with the command that reproduces it, and
// their throughput per GPU by rank, labelled with their layout.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kcast::plan {

struct HtmlColumn {
  std::string header, key;  // the JSON key of each candidate; a number shows with `decimals`
  int decimals = 0;
};

// `list`: the candidates as --format json prints them, best first; `labels`: each one's short label in
// the chart. `rate_key`: their throughput per GPU (the chart's y axis, named `rate_label`).
std::string plan_html(const std::string& title, const std::string& subtitle, const std::vector<HtmlColumn>& columns,
                      const nlohmann::json& list, const std::vector<std::string>& labels, const std::string& rate_key,
                      const std::string& rate_label);

}  // namespace kcast::plan
