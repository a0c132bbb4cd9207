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

namespace kcast {

struct KernelListOptions {
  const GpuDatabase* gpus = nullptr;         // null: `gpu` cells are kept as written
  const Classifier* classifier = nullptr;    // null: empty class -> other
};

// path "-" reads standard input.
std::vector<Kernel> read_kernel_list(const std::string& path, const KernelListOptions& opt);
std::vector<Kernel> parse_kernel_list(const std::string& text, const std::string& file,
                                      const KernelListOptions& opt);

// The column order kcast writes.
extern const char* const kKernelListColumns[];
void write_kernel_list(const std::vector<Kernel>& kernels, std::ostream& out);
// Writes atomically: a temporary file next to `path`, renamed over it only when complete.
void write_kernel_list_file(const std::vector<Kernel>& kernels, const std::string& path);

}  // namespace kcast
