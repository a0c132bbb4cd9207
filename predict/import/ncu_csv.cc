// placeholder
#include "model/error.h"
#include "predict/import/import.h"
namespace kcast {
void read_ncu_csv(const std::string& path, const ImportOptions&, KernelSink&) { throw InputError(path + ": not implemented"); }
void parse_ncu_csv(const std::string&, const std::string& name, const ImportOptions&, KernelSink&) { throw InputError(name + ": not implemented"); }
}
