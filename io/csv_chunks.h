// A large CSV read on several threads: its rows split at line ends into chunks, each read by its own
// fast-cpp-csv-parser reader that sees the file's header line and then the chunk. fccp splits lines
// before it looks at quotes (a quoted field never spans lines), so every line end is a row boundary.
#pragma once
#include <csv.h>

#include <cstddef>
#include <string_view>
#include <vector>

namespace kcast {

// One chunk as a CSV of its own: `header` (with its line end), then `rows`. Both stay owned by the
// caller (a MappedFile's bytes).
class CsvChunkSource : public io::ByteSourceBase {
 public:
  CsvChunkSource(std::string_view header, std::string_view rows) : parts_{header, rows} {}
  int read(char* buffer, int size) override;

 private:
  std::string_view parts_[2];
};

// How many chunks `bytes` of rows are read in: one per core (at most `max_threads`, 0: no cap), each
// of at least `min_bytes` (a reader holds a 48 MiB buffer and a thread of its own); 1: read it whole.
size_t csv_chunk_count(size_t bytes, size_t min_bytes, unsigned max_threads = 0);

// `rows` cut into `parts` chunks of about equal size, each ending at a line end (the last at the end
// of `rows`); fewer when lines are long. Together they are `rows`, in order.
std::vector<std::string_view> split_at_line_ends(std::string_view rows, size_t parts);

}  // namespace kcast
