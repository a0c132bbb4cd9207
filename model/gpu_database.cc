#include "model/gpu_database.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "model/ascii_lower.h"
#include "model/error.h"

namespace kcast {

std::string GpuDatabase::normalize(std::string_view name) {
  std::string s = ascii_lower(name);
  // Vendor and marketing words that device strings add or drop between tools.
  for (std::string_view w : {"nvidia", "tesla", "geforce", "amd", "instinct", "(tm)"}) {
    for (size_t p; (p = s.find(w)) != std::string::npos;) s.erase(p, w.size());
  }
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += c;
  return out;
}

GpuDatabase::GpuDatabase(std::vector<GpuSpec> gpus) : gpus_(std::move(gpus)) {
  for (size_t i = 0; i < gpus_.size(); ++i) {
    keys_.emplace_back(normalize(gpus_[i].name), i);
    for (const auto& a : gpus_[i].aliases) keys_.emplace_back(normalize(a), i);
  }
}

const GpuSpec* GpuDatabase::find(std::string_view name) const {
  const std::string key = normalize(name);
  if (key.empty()) return nullptr;
  for (const auto& [k, i] : keys_)
    if (k == key) return &gpus_[i];
  return nullptr;
}

const GpuSpec& GpuDatabase::resolve(std::string_view name) const {
  if (const GpuSpec* g = find(name)) return *g;
  std::ostringstream msg;
  msg << "unknown GPU '" << name << "'";
  auto sug = suggestions(name);
  if (!sug.empty()) {
    msg << "; did you mean: ";
    for (size_t i = 0; i < sug.size(); ++i) msg << (i ? ", " : "") << sug[i];
  }
  msg << " (see 'kcast gpus')";
  throw InputError(msg.str());
}

GpuResolution GpuDatabase::resolve(std::string_view name, const DeviceProps& props) const {
  if (const GpuSpec* g = find(name)) return {g, ""};
  if (props.sm_count <= 0 || props.compute_capability.empty()) return {};
  const GpuSpec* best = nullptr;
  double best_d = 1e300;
  for (const auto& g : gpus_) {
    if (g.sm_count != props.sm_count || g.compute_capability != props.compute_capability) continue;
    double d = (known(props.memory_gb) && known(g.memory_gb)) ? std::fabs(g.memory_gb - props.memory_gb) : 0;
    if (d < best_d) best_d = d, best = &g;
  }
  if (!best) return {};
  std::ostringstream w;
  w << "GPU '" << name << "' is not in the database; resolved by properties (" << props.sm_count
    << " SMs, compute capability " << props.compute_capability;
  if (known(props.memory_gb)) w << ", " << std::lround(props.memory_gb) << " GB";
  w << ") to " << best->name;
  return {best, w.str()};
}

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::vector<std::string> GpuDatabase::suggestions(std::string_view name, size_t n) const {
  const std::string key = normalize(name);
  std::vector<std::pair<double, size_t>> scored;  // (distance, gpu index), best key per GPU
  for (size_t i = 0; i < gpus_.size(); ++i) scored.emplace_back(1e300, i);
  for (const auto& [k, i] : keys_) {
    // Device strings share their model number up front ("a100..."), so a common prefix counts extra.
    size_t prefix = 0;
    while (prefix < key.size() && prefix < k.size() && key[prefix] == k[prefix]) ++prefix;
    double d = double(edit_distance(key, k)) - 1.5 * double(prefix);
    // A query contained in a key ("a100") is a strong hint even when the key is long.
    if (!key.empty() && k.find(key) != std::string::npos) d = std::min(d, 1.0);
    scored[i].first = std::min(scored[i].first, d);
  }
  std::stable_sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (const auto& [d, i] : scored) {
    if (out.size() >= n) break;
    if (d <= std::max<double>(4.0, key.size() * 0.7)) out.push_back(gpus_[i].name);
  }
  return out;
}

}  // namespace kcast
