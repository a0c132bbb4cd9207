// Row: one measurement in the tidy CSV of docs/MICROBENCH.md
// (benchmark,dtype,size,value,unit,spread,device,notes). Free of CUDA so that the format code can be
// compiled, and tested against kcast's reader, without a CUDA toolkit.
#pragma once
#include <cmath>
#include <string>

namespace kcast::microbench {

struct Row {
  std::string benchmark, dtype, size;
  double value = 0;
  std::string unit;
  double spread = NAN;  // relative standard deviation of the samples; NaN = not applicable
  std::string notes;
};

}  // namespace kcast::microbench
