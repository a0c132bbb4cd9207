// Atomic output: write to a temporary file beside the target and rename it into place only when the
// whole content is written, so a failed run never destroys a user's existing output file.
#pragma once
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace kcast {

// Calls `write` with a stream to a temporary file, then renames it to `path`. On any exception or
// stream failure the temporary file is removed and the error propagates (InputError for I/O).
// A symlink keeps pointing where it did and its target is replaced; a device or pipe (/dev/null, a
// FIFO) is written as it is, since it cannot be renamed over; a directory is an error.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

// Several outputs of one run, each written to its temporary file first and all renamed into place
// only by commit(): a run that fails after staging some leaves every existing output as it was.
class StagedOutputs {
 public:
  StagedOutputs() = default;
  StagedOutputs(const StagedOutputs&) = delete;
  StagedOutputs& operator=(const StagedOutputs&) = delete;
  ~StagedOutputs();  // removes what was staged and not committed
  void stage(const std::string& path, const std::function<void(std::ostream&)>& write);
  void commit();

 private:
  std::vector<std::pair<std::string, std::string>> staged_;  // path, temporary file ("" = written)
};

// Removes the temporary files of outputs still being written when SIGINT, SIGTERM or SIGHUP arrives,
// then lets the signal end the process as it would have (a shell sees 130, 143, 129). Installed once
// by a program's main; a signal the process was started ignoring stays ignored.
void install_interrupt_cleanup();

// Whole file (or "-" = stdin) as a string; InputError naming the path when unreadable, a directory,
// or (max_bytes > 0) longer than max_bytes.
std::string read_file(const std::string& path, std::size_t max_bytes = 0);

// The limit for documents read whole and parsed in memory (model.json, config.json): far above any
// real one, far below what would exhaust memory.
inline constexpr std::size_t kMaxDocumentBytes = std::size_t{256} << 20;

}  // namespace kcast
