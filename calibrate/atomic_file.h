// Atomic output: write to a temporary file beside the target and rename it into place only when the
// whole content is written, so a failed run never destroys a user's existing output file.
#pragma once
#include <functional>
#include <iosfwd>
#include <string>

namespace kcast {

// Calls `write` with a stream to a temporary file, then renames it to `path`. On any exception or
// stream failure the temporary file is removed and the error propagates (InputError for I/O).
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);
// Whole file (or "-" = stdin) as a string; InputError naming the path when unreadable.
std::string read_file(const std::string& path);

}  // namespace kcast
