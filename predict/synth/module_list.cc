// Megatron-LM's module lists (module_list.h).
#include "predict/synth/module_list.h"

#include <algorithm>

#include "model/error.h"

namespace kcast::synth {

unsigned parse_module_list(const std::string& option, const std::string& text, std::span<const ModuleName> table,
                           std::span<const RefusedModule> refused) {
  unsigned bits = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find_first_of(", ", start), text.size());
    const std::string name = text.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    for (const RefusedModule& r : refused)
      if (name == r.name) throw InputError("option '--" + option + "': " + r.why);
    bool known = false;
    for (const ModuleName& m : table)
      if (name == m.name) bits |= m.bit, known = true;
    if (!known) {
      std::string names;
      for (const ModuleName& m : table) names += (names.empty() ? "" : ", ") + std::string(m.name);
      throw InputError("option '--" + option + "': '" + name + "' is not one of " + names);
    }
  }
  return bits;
}

std::vector<std::string> module_names(unsigned bits, std::span<const ModuleName> table) {
  std::vector<std::string> out;
  for (const ModuleName& m : table)
    if (bits & m.bit) out.emplace_back(m.name);
  return out;
}

std::string module_list_string(unsigned bits, std::span<const ModuleName> table) {
  std::string out;
  for (const std::string& n : module_names(bits, table)) {
    if (!out.empty()) out += ',';
    out += n;
  }
  return out;
}

}  // namespace kcast::synth
