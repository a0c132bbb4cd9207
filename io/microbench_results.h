// Microbenchmark results (docs/MICROBENCH.md): the tidy CSV that kcast-microbench writes and that
// data/microbench/*.csv ships for GPUs nobody here can run (published figures). One row per
// measurement: benchmark,dtype,size,value,unit,spread,device,notes. `kcast calibrate --microbench`
// reads these files and apply_microbench() copies the summary figures into a GpuSpec's measured_*
// fields, which override the architecture defaults of the cost model.
#pragma once
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu_spec.h"

namespace kcast {

struct MicrobenchRow {
  std::string benchmark;  // e.g. dram_bw, gemm_peak, device_info
  std::string dtype;      // canonical dtype name (fp16, bf16, ...) or empty
  std::string size;       // bytes for memory benchmarks, MxNxK for GEMMs, else empty
  double value = kUnknown;
  std::string unit;       // GB/s, TFLOP/s, us, or the device_info quantity (sm_count, ...)
  double spread = kUnknown;  // stddev/mean of the samples; NaN when not given
  std::string device;
  std::string notes;
  unsigned line = 0;  // line in the source file (0 when built in memory)
};

struct MicrobenchResults {
  std::string device;  // the one device all rows describe
  std::vector<MicrobenchRow> rows;
  std::string source_file;

  // Value of the first row with this benchmark and dtype; NaN when absent. Summary benchmarks
  // (dram_bw, l2_bw, launch_interval, fma_fp32, gemm_peak per dtype, ...) occur once each.
  double get(std::string_view benchmark, std::string_view dtype = "") const;
  // Largest value over all rows with this benchmark and dtype (for sweeps); NaN when absent.
  double best(std::string_view benchmark, std::string_view dtype = "") const;
  const MicrobenchRow* find(std::string_view benchmark, std::string_view dtype = "") const;
};

// Column order of the format.
extern const char* const kMicrobenchColumns[8];

// Strict reader: bad numbers, unknown dtypes, missing required columns (benchmark, value, unit) and
// rows naming different devices throw InputError "FILE:LINE: column 'x': ...". Lines starting with
// '#' and blank lines are skipped. path "-" reads standard input.
MicrobenchResults read_microbench_csv(const std::string& path);
MicrobenchResults parse_microbench_csv(const std::string& text, const std::string& file);

// Writes the header and every row; a row without a device gets results.device.
void write_microbench_csv(const MicrobenchResults& results, std::ostream& out);

// Copies the summary figures into gpu's measured_* fields; fields without a figure are left as they
// are. gemm efficiency per dtype = gemm_peak(dtype) / gpu.peak_tflops(dtype). A summary row in an
// unexpected unit, or with a non-positive value, throws InputError naming its line. The caller is
// responsible for matching results.device to gpu.
void apply_microbench(const MicrobenchResults& results, GpuSpec& gpu);

}  // namespace kcast
