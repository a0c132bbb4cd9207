// libFuzzer target: arbitrary bytes into the kineto-json reader (parse_kineto_json); see fuzz_reader.h.
#include "tests/fuzz/fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kcast::fuzz::run_reader(data, size, "fuzz.json", [](auto&&... a) { kcast::parse_kineto_json(a...); });
}
