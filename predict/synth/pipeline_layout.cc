// Pipeline layouts (pipeline_layout.h).
#include "predict/synth/pipeline_layout.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>

#include "model/error.h"

namespace kcast::synth {

std::vector<int64_t> pipeline_layout(const TransformerConfig& cfg, const SynthOptions& opt) {
  const int64_t chunks = opt.pp * opt.virtual_stages, L = cfg.layers;
  if (!opt.pp_layout.empty()) {
    if (opt.pp < 2) throw InputError("option '--pp-layout': lays out pipeline stages; give --pp 2 or more");
    if (int64_t(opt.pp_layout.size()) != chunks)
      throw InputError("option '--pp-layout': give " + std::to_string(chunks) + " layer counts (--pp " +
                       std::to_string(opt.pp) + " x --virtual-stages " + std::to_string(opt.virtual_stages) +
                       "), got " + std::to_string(opt.pp_layout.size()));
    const int64_t sum = std::accumulate(opt.pp_layout.begin(), opt.pp_layout.end(), int64_t(0));
    if (sum != L)
      throw InputError("option '--pp-layout': the counts sum to " + std::to_string(sum) + ", not the " +
                       std::to_string(L) + " layers of " + cfg.name);
    return opt.pp_layout;
  }
  if (L % chunks == 0) return std::vector<int64_t>(size_t(chunks), L / chunks);
  if (opt.pp > 1 && (L + 2) % chunks == 0 && (L + 2) / chunks >= 2) {
    std::vector<int64_t> out(size_t(chunks), (L + 2) / chunks);
    --out.front();
    --out.back();
    return out;
  }
  // Balanced: every chunk floor(L / chunks) layers, the first L mod chunks one more. The most a stage
  // holds is what Megatron-Bridge's DeepSeek-V3 layouts give (61 layers over 16 chunks: 4 a chunk, the
  // last one 1), spread more evenly.
  if (opt.pp > 1 && L >= chunks) {
    std::vector<int64_t> out(size_t(chunks), L / chunks);
    for (int64_t c = 0; c < L % chunks; ++c) ++out[size_t(c)];
    return out;
  }
  const std::string what = opt.virtual_stages > 1 ? std::to_string(opt.pp) + " stages x " +
                                                        std::to_string(opt.virtual_stages) + " virtual stages"
                                                  : std::to_string(opt.pp) + " stages";
  throw InputError(std::string("option '--") + (opt.virtual_stages > 1 ? "virtual-stages" : "pp") + "': " + what +
                   " are more chunks than the " + std::to_string(L) + " layers of " + cfg.name + "; give fewer");
}

std::string pipeline_layout_note(const TransformerConfig& cfg, const SynthOptions& opt) {
  const int64_t chunks = opt.pp * opt.virtual_stages, L = cfg.layers;
  if (opt.pp < 2 || !opt.pp_layout.empty() || L % chunks == 0) return "";
  const std::vector<int64_t> out = pipeline_layout(cfg, opt);
  const std::string critical = "; the step follows the stage with the most layers (" +
                               std::to_string(critical_stage_layers(out, opt.pp)) + ")";
  if ((L + 2) % chunks == 0 && (L + 2) / chunks >= 2)
    return "pipeline layout: " + std::to_string(chunks) + " chunks of " + std::to_string(out[1]) +
           " layers, the first and the last one fewer: the embedding and the loss counted as a layer each "
           "(Megatron-LM's account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split, as "
           "Megatron-Bridge's Llama 3.1 405B recipes set them)" + critical;
  return "pipeline layout: " + std::to_string(chunks) + " chunks of " + std::to_string(L / chunks) + " or " +
         std::to_string(L / chunks + 1) + " layers (the first " + std::to_string(L % chunks) +
         " one more), an even split of layers the chunks do not divide; --pp-layout gives a recipe's own" + critical;
}

std::vector<int64_t> layers_per_stage(const std::vector<int64_t>& chunks, int64_t pp) {
  std::vector<int64_t> stage(size_t(pp), 0);
  for (size_t c = 0; c < chunks.size(); ++c) stage[c % size_t(pp)] += chunks[c];
  return stage;
}

int64_t critical_stage_layers(const std::vector<int64_t>& chunks, int64_t pp) {
  const std::vector<int64_t> stage = layers_per_stage(chunks, pp);
  return *std::max_element(stage.begin(), stage.end());
}

namespace {

// Expands Megatron's layout grammar into its flat letters and '|': item := letter | '(' items ')',
// each optionally followed by '*N'.
class LayoutExpander {
 public:
  LayoutExpander(const std::string& s, const std::string& option) : s_(s), option_(option) {}
  std::string run() {
    std::string out = items();
    if (i_ != s_.size()) fail("an unmatched ')'");
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("option '--" + option_ + "': " + what + " at character " + std::to_string(i_ + 1) + " of '" +
                     s_ + "' (Megatron's layout: E, t, m, L, '|' between chunks, (...)*N to repeat)");
  }
  std::string items() {
    std::string out;
    while (i_ < s_.size() && s_[i_] != ')') {
      std::string item;
      const char c = s_[i_];
      if (c == '(') {
        ++i_;
        item = items();
        if (i_ >= s_.size() || s_[i_] != ')') fail("a '(' without its ')'");
        ++i_;
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = std::string(1, c);
        ++i_;
      } else {
        fail(std::string("'") + c + "' is not a layout letter");
      }
      out += repeated(item);
    }
    return out;
  }
  std::string repeated(const std::string& item) {
    if (i_ >= s_.size() || s_[i_] != '*') return item;
    ++i_;
    size_t j = i_;
    while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) ++j;
    if (j == i_ || j - i_ > 6) fail("'*' without a repeat count");
    const int n = std::stoi(s_.substr(i_, j - i_));
    i_ = j;
    std::string out;
    for (int r = 0; r < n; ++r) out += item;
    return out;
  }
  const std::string& s_;
  const std::string& option_;
  size_t i_ = 0;
};

}  // namespace

bool is_megatron_layout(const std::string& layout) {
  return layout.find_first_of("EtmL|(") != std::string::npos;
}

MegatronLayout parse_megatron_layout(const std::string& layout, const std::string& option) {
  const std::string flat = LayoutExpander(layout, option).run();
  MegatronLayout out;
  out.layers.push_back(0);
  for (char c : flat) {
    if (c == '|') {
      out.layers.push_back(0);
    } else if (c == 't') {
      ++out.layers.back();
    } else if (c == 'm') {
      const int64_t chunk = int64_t(out.layers.size()) - 1;
      if (out.mtp_chunk >= 0 && out.mtp_chunk != chunk)
        throw InputError("option '--" + option + "': multi-token prediction ('m') in two chunks of '" + layout + "'");
      out.mtp_chunk = chunk;
      ++out.mtp;
    }
  }
  return out;
}

bool mtp_on_critical_path(const TransformerConfig& cfg, const SynthOptions& opt) {
  if (opt.mtp_layers <= 0) return false;
  if (opt.pp < 2) return true;
  const std::vector<int64_t> chunks = pipeline_layout(cfg, opt);
  const int64_t chunk = opt.pp_layout_mtp_chunk >= 0 ? opt.pp_layout_mtp_chunk : int64_t(chunks.size()) - 1;
  const std::vector<int64_t> stage = layers_per_stage(chunks, opt.pp);
  return stage[size_t(chunk % opt.pp)] + opt.mtp_layers > *std::max_element(stage.begin(), stage.end());
}

}  // namespace kcast::synth
