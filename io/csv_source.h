// Helpers around fast-cpp-csv-parser (libfccp): an in-memory byte source (for embedded data and
// decompressed input) and strict number parsing that reports the file, line and column.
#pragma once
#include <csv.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace kcast {

class MemoryByteSource : public io::ByteSourceBase {
 public:
  explicit MemoryByteSource(std::string data) : data_(std::move(data)) {}
  int read(char* buffer, int size) override {
    size_t n = std::min<size_t>(size_t(size), data_.size() - pos_);
    std::memcpy(buffer, data_.data() + pos_, n);
    pos_ += n;
    return int(n);
  }

 private:
  std::string data_;
  size_t pos_ = 0;
};

// Where a cell sits, for error messages: "FILE:LINE: column 'NAME'".
struct CellRef {
  std::string_view file;
  unsigned line;
  std::string_view column;
  std::string where() const;
};

// Parse a cell; empty cells are "not given" (returns false). Bad text throws InputError naming the
// cell. Accepts surrounding spaces.
bool parse_double_cell(const char* text, const CellRef& at, double& out);
bool parse_int_cell(const char* text, const CellRef& at, int64_t& out);

}  // namespace kcast
