// placeholder
#include "model/error.h"
#include "predict/import/import.h"
namespace kcast {
void read_nsys_sqlite(const std::string& path, const ImportOptions&, KernelSink&) { throw InputError(path + ": not implemented"); }
void parse_nsys_sqlite(const std::string&, const std::string& name, const ImportOptions&, KernelSink&) { throw InputError(name + ": not implemented"); }
}
