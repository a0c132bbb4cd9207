// Writing the result CSV (docs/MICROBENCH.md): RFC 4180 quoting, shortest round-trip numbers, and an
// atomic file replace (temp file + rename) so a failed or interrupted run never destroys an existing
// result file.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "microbench/bench_context.h"

namespace kcast::microbench {

inline constexpr const char* kCsvHeader = "benchmark,dtype,size,value,unit,spread,device,notes";

void write_csv(std::ostream& out, const std::vector<Row>& rows, const std::string& device);
// Writes to `path` atomically; throws std::runtime_error naming the path on failure.
void write_csv_file(const std::string& path, const std::vector<Row>& rows, const std::string& device);

}  // namespace kcast::microbench
