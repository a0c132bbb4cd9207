// libFuzzer target: arbitrary bytes into the nsys-sqlite reader (parse_nsys_sqlite); see fuzz_reader.h.
#include "tests/fuzz/fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kcast::fuzz::run_reader(data, size, "fuzz.sqlite", [](auto&&... a) { kcast::parse_nsys_sqlite(a...); });
}
