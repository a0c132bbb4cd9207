#include "calibrate/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "model/error.h"

namespace kcast {

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw InputError(path + ": cannot write: " + std::strerror(errno));
      write(out);
      out.flush();
      if (!out) throw InputError(path + ": write failed");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw InputError(path + ": cannot rename into place: " + std::strerror(errno));
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

std::string read_file(const std::string& path) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kcast
