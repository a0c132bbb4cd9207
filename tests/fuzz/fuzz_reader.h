// Shared body of the per-reader libFuzzer targets: arbitrary bytes into one reader. Bad input must
// end in kcast::InputError; any other exception, crash, leak or sanitizer report is a bug. The
// kernels a reader yields also go through the aggregator, as `kcast import --aggregate` would.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/error.h"
#include "predict/import/import.h"

namespace kcast::fuzz {

template <class Reader>
int run_reader(const uint8_t* data, size_t size, const char* file, Reader read) {
  static const ImportOptions opt = [] {
    ImportOptions o;
    o.warn = [](const std::string&) {};  // warnings are expected on fuzzed device names
    return o;
  }();
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  KernelCollector all;
  try {
    read(bytes, file, opt, all);
  } catch (const InputError&) {
    return 0;
  }
  KernelAggregator agg;
  for (Kernel& k : all.take()) agg.add(std::move(k));
  agg.take();
  return 0;
}

}  // namespace kcast::fuzz
