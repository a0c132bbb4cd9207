#include "io/embedded_data.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "model/error.h"

namespace kcast {

std::string data_file(std::string_view path) {
  if (const char* dir = std::getenv("KCAST_DATA_DIR"); dir && *dir) {
    std::ifstream in(std::string(dir) + "/" + std::string(path), std::ios::binary);
    if (in) {
      std::ostringstream ss;
      ss << in.rdbuf();
      return ss.str();
    }
  }
  std::string_view e = embedded_file(path);
  if (e.empty()) throw InputError("data file '" + std::string(path) + "' is not available");
  return std::string(e);
}

}  // namespace kcast
