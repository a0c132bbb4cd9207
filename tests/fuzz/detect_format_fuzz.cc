// libFuzzer target: arbitrary bytes into format detection (`--from auto`), then into the reader it
// picks, as `kcast import` does with a file of unknown format. Only kcast::InputError may escape.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/error.h"
#include "predict/import/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kcast::ImportOptions opt = [] {
    kcast::ImportOptions o;
    o.warn = [](const std::string&) {};
    return o;
  }();
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  kcast::KernelAggregator sink;
  try {
    switch (kcast::detect_format_bytes(bytes, "fuzz")) {
      case kcast::TraceFormat::nsys_sqlite: kcast::parse_nsys_sqlite(bytes, "fuzz", opt, sink); break;
      case kcast::TraceFormat::nsys_csv: kcast::parse_nsys_csv(bytes, "fuzz", opt, sink); break;
      case kcast::TraceFormat::ncu_csv: kcast::parse_ncu_csv(bytes, "fuzz", opt, sink); break;
      case kcast::TraceFormat::kineto_json: kcast::parse_kineto_json(bytes, "fuzz", opt, sink); break;
      default: break;
    }
  } catch (const kcast::InputError&) {
  }
  sink.take();
  return 0;
}
