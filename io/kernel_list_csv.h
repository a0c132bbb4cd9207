// Reader and writer of the kernel-list CSV (docs/formats.md, kcast-csv v1). The reader is strict: every
// error names the file, line and column. Classes left empty are filled by the classifier; GEMM rows
// get flops/bytes from their shape; GPU names are resolved to canonical names.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "model/classifier.h"
#include "model/gpu_database.h"
#include "model/kernel.h"
#include "model/kernel_rows.h"

namespace kcast {

struct KernelListOptions {
  const GpuDatabase* gpus = nullptr;         // null: `gpu` cells are kept as written
  const Classifier* classifier = nullptr;    // null: empty class -> other
  // Where the reader's warnings go (a header column that looks like a misspelt known one); null:
  // standard error, each line prefixed "kcast: ".
  std::vector<std::string>* warnings = nullptr;
};

// The warnings for a header line whose unknown columns are close to known ones (a case or spacing
// difference, a missing unit suffix, an edit or two away): "FILE:1: column 'duration' is not a
// kernel-list column and is ignored; did you mean 'duration_us'?". Other unknown columns stay
// silent, as the format allows.
std::vector<std::string> near_miss_columns(const std::string& header_line, const std::string& file);

// path "-" reads standard input.
std::vector<Kernel> read_kernel_list(const std::string& path, const KernelListOptions& opt);
// The same rows as a table (model/kernel_rows.h): each distinct kernel once, each row 40 bytes. What
// `kcast predict` and `kcast whatif` read a trace as.
KernelTable read_kernel_table(const std::string& path, const KernelListOptions& opt);
std::vector<Kernel> parse_kernel_list(const std::string& text, const std::string& file,
                                      const KernelListOptions& opt);

// The column order kcast writes.
extern const char* const kKernelListColumns[];
void write_kernel_list(const std::vector<Kernel>& kernels, std::ostream& out);
// Its header line, and one row, appended to `out` (writers that stream rows).
void append_kernel_list_header(std::string& out);
void append_kernel_row(std::string& out, const Kernel& k);
// Writes atomically: a temporary file next to `path`, renamed over it only when complete.
void write_kernel_list_file(const std::vector<Kernel>& kernels, const std::string& path);

}  // namespace kcast
