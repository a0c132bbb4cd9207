#include "model/arch_facts.h"

namespace kcast {

const ArchFacts& find_arch_facts(const std::vector<ArchFacts>& table, const std::string& cc) {
  static const ArchFacts kDefault;
  const ArchFacts* major = nullptr;
  const ArchFacts* fallback = nullptr;
  for (const auto& a : table) {
    if (a.compute_capability == cc) return a;
    if (a.compute_capability == "*") fallback = &a;
    if (!major && !cc.empty() && a.compute_capability.substr(0, a.compute_capability.find('.')) ==
                                     cc.substr(0, cc.find('.')))
      major = &a;
  }
  if (major) return *major;
  return fallback ? *fallback : kDefault;
}

}  // namespace kcast
