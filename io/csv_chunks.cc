#include "io/csv_chunks.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace kcast {

int CsvChunkSource::read(char* buffer, int size) {
  size_t n = 0;
  for (std::string_view& part : parts_) {
    const size_t take = std::min(size_t(size) - n, part.size());
    std::memcpy(buffer + n, part.data(), take);
    part.remove_prefix(take);
    n += take;
  }
  return int(n);
}

size_t csv_chunk_count(size_t bytes, size_t min_bytes, unsigned max_threads) {
  size_t n = std::max(1u, std::thread::hardware_concurrency());
  if (max_threads) n = std::min<size_t>(n, max_threads);
  return std::max<size_t>(1, std::min(n, bytes / std::max<size_t>(min_bytes, 1)));
}

std::vector<std::string_view> split_at_line_ends(std::string_view rows, size_t parts) {
  std::vector<std::string_view> out;
  parts = std::max<size_t>(parts, 1);
  for (size_t at = 0, k = 1; at < rows.size(); ++k) {
    size_t end = k >= parts ? std::string_view::npos : rows.find('\n', std::max(at, rows.size() / parts * k));
    end = end == std::string_view::npos ? rows.size() : end + 1;
    out.push_back(rows.substr(at, end - at));
    at = end;
  }
  return out;
}

}  // namespace kcast
