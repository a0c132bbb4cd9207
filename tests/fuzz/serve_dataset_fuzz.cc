// libFuzzer target: arbitrary bytes as a `kcast serve --dataset` file, read both as CSV and as JSONL.
// Only kcast::InputError may escape; every request read has lengths in range and a finite arrival
// time at or after 0 (the simulator relies on both).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "model/error.h"
#include "predict/serve/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const char* name : {"fuzz.csv", "fuzz.jsonl"}) {
    try {
      bool arrivals = false;
      for (const kcast::serve::Request& r : kcast::serve::parse_dataset(text, name, &arrivals)) {
        if (r.input <= 0 || r.output <= 0 || r.input > (int64_t(1) << 24) || r.output > (int64_t(1) << 24)) std::abort();
        if (arrivals && !(std::isfinite(r.arrival_s) && r.arrival_s >= 0)) std::abort();
      }
    } catch (const kcast::InputError&) {
    }
  }
  return 0;
}
