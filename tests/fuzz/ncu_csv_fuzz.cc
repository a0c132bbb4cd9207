// libFuzzer target: arbitrary bytes into the ncu-csv reader (parse_ncu_csv); see fuzz_reader.h.
#include "tests/fuzz/fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kcast::fuzz::run_reader(data, size, "fuzz-ncu.csv", [](auto&&... a) { kcast::parse_ncu_csv(a...); });
}
