#include "predict/cli/measurement_context.h"

#include "model/error.h"

namespace kcast::cli {

std::string neusight_context(const Kernel& k) {
  switch (k.cls) {
    case KernelClass::gemm: return k.batch > 1 ? "neusight:bmm" : "neusight:linear";
    case KernelClass::attention: return "neusight:bmm";
    case KernelClass::softmax: return "neusight:softmax";
    case KernelClass::normalization: return "neusight:ln";
    case KernelClass::conv: return "neusight:conv";
    default: return "neusight:add";
  }
}

void tag_measurement_context(std::vector<Kernel>& rows, const std::string& setup) {
  if (setup != "neusight")
    throw InputError("option '--context': unknown measurement setup '" + setup + "' (known: neusight)");
  for (Kernel& k : rows) k.context = neusight_context(k);
}

}  // namespace kcast::cli
