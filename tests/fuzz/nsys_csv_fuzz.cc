// libFuzzer target: arbitrary bytes into the nsys-csv reader (parse_nsys_csv). Bad input must end in
// kcast::InputError; any other exception, crash, leak or sanitizer report is a bug. The kernels it
// yields also go through the aggregator, as `kcast import --aggregate` would.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/error.h"
#include "predict/import/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kcast::ImportOptions opt = [] {
    kcast::ImportOptions o;
    o.warn = [](const std::string&) {};  // warnings are expected on fuzzed device names
    return o;
  }();
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  kcast::KernelCollector all;
  try {
    kcast::parse_nsys_csv(bytes, "fuzz.csv", opt, all);
  } catch (const kcast::InputError&) {
    return 0;
  }
  kcast::KernelAggregator agg;
  for (kcast::Kernel& k : all.take()) agg.add(std::move(k));
  agg.take();
  return 0;
}
