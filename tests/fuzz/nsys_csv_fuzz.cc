// libFuzzer target: arbitrary bytes into the nsys-csv reader (parse_nsys_csv); see fuzz_reader.h.
#include "tests/fuzz/fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kcast::fuzz::run_reader(data, size, "fuzz.csv", [](auto&&... a) { kcast::parse_nsys_csv(a...); });
}
