// Megatron-LM's module lists (--recompute-modules, --cuda-graph-modules): names from a fixed table,
// written "a,b" or "a b", carried as bits, printed back in the table's order.
#pragma once
#include <span>
#include <string>
#include <vector>

namespace kcast::synth {

struct ModuleName {
  const char* name;
  unsigned bit;
};
// A name Megatron knows that kcast refuses, and why (the message after "option '--OPTION': ").
struct RefusedModule {
  const char* name;
  const char* why;
};

// The bits `text` names; InputError naming `option` for a refused name or one not in `table`. An empty
// list is 0: the caller says what it needs.
unsigned parse_module_list(const std::string& option, const std::string& text, std::span<const ModuleName> table,
                           std::span<const RefusedModule> refused = {});
// The names of `bits` in the table's order; and comma-separated.
std::vector<std::string> module_names(unsigned bits, std::span<const ModuleName> table);
std::string module_list_string(unsigned bits, std::span<const ModuleName> table);

}  // namespace kcast::synth
