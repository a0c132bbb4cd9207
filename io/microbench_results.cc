// Reader, writer and applier of microbenchmark results; see microbench_results.h.
#include "io/microbench_results.h"

#include "io/csv_quote.h"

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <ostream>

#include "io/atomic_file.h"
#include "io/csv_source.h"
#include "model/error.h"

namespace kcast {

const char* const kMicrobenchColumns[8] = {"benchmark", "dtype", "size",   "value",
                                           "unit",      "spread", "device", "notes"};

namespace {

using Reader = io::CSVReader<8, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>,
                             io::throw_on_overflow, io::single_and_empty_line_comment<'#'>>;

std::string cell(const char* c) { return c ? std::string(c) : std::string(); }

MicrobenchResults read_all(Reader& in, const std::string& file) {
  in.read_header(io::ignore_extra_column | io::ignore_missing_column, "benchmark", "dtype", "size",
                 "value", "unit", "spread", "device", "notes");
  for (const char* required : {"benchmark", "value", "unit"})
    if (!in.has_column(required))
      throw InputError(file + ": missing required column '" + required +
                       "' (expected header benchmark,dtype,size,value,unit,spread,device,notes)");
  MicrobenchResults res;
  res.source_file = file;
  unsigned device_line = 0;
  char* c[8] = {};
  while (in.read_row(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7])) {
    const unsigned line = in.get_file_line();
    auto at = [&](int col) { return CellRef{file, line, kMicrobenchColumns[col]}; };
    MicrobenchRow r;
    r.line = line;
    r.benchmark = cell(c[0]);
    if (r.benchmark.empty()) throw InputError(at(0).where() + ": benchmark name is empty");
    if (c[1] && *c[1]) {
      auto dt = parse_dtype(c[1]);
      if (!dt) throw InputError(at(1).where() + ": unknown dtype '" + c[1] + "'");
      r.dtype = std::string(to_string(*dt));
    }
    r.size = cell(c[2]);
    if (!parse_double_cell(c[3], at(3), r.value)) throw InputError(at(3).where() + ": value is empty");
    r.unit = cell(c[4]);
    if (r.unit.empty()) throw InputError(at(4).where() + ": unit is empty");
    if (parse_double_cell(c[5], at(5), r.spread) && r.spread < 0)
      throw InputError(at(5).where() + ": spread must not be negative");
    r.device = cell(c[6]);
    if (!r.device.empty()) {
      if (res.device.empty()) {
        res.device = r.device;
        device_line = line;
      } else if (r.device != res.device) {
        throw InputError(at(6).where() + ": device '" + r.device + "' differs from '" + res.device +
                         "' on line " + std::to_string(device_line) + " (one device per file)");
      }
    }
    r.notes = cell(c[7]);
    res.rows.push_back(std::move(r));
  }
  return res;
}

// Shortest text that reads back as the same double; empty for NaN.
std::string number(double v) {
  if (!known(v)) return "";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : std::string();
}


// The figure apply_microbench needs, checked: NaN when absent, InputError when in the wrong unit.
double summary(const MicrobenchResults& res, std::string_view benchmark, std::string_view dtype,
               std::initializer_list<std::string_view> units) {
  const MicrobenchRow* r = res.find(benchmark, dtype);
  if (!r) return kUnknown;
  const std::string where = res.source_file + ":" + std::to_string(r->line);
  bool unit_ok = false;
  for (std::string_view u : units) unit_ok |= r->unit == u;
  if (!unit_ok)
    throw InputError(where + ": column 'unit': '" + r->unit + "' for " + std::string(benchmark) +
                     (dtype.empty() ? "" : " " + std::string(dtype)) + ", expected '" +
                     std::string(*units.begin()) + "'");
  if (!(r->value > 0))
    throw InputError(where + ": column 'value': " + std::string(benchmark) + " must be positive");
  return r->value;
}

}  // namespace

const MicrobenchRow* MicrobenchResults::find(std::string_view benchmark, std::string_view dtype) const {
  for (const MicrobenchRow& r : rows)
    if (r.benchmark == benchmark && r.dtype == dtype) return &r;
  return nullptr;
}

double MicrobenchResults::get(std::string_view benchmark, std::string_view dtype) const {
  const MicrobenchRow* r = find(benchmark, dtype);
  return r ? r->value : kUnknown;
}

double MicrobenchResults::best(std::string_view benchmark, std::string_view dtype) const {
  double b = kUnknown;
  for (const MicrobenchRow& r : rows)
    if (r.benchmark == benchmark && r.dtype == dtype && !(r.value <= b)) b = r.value;
  return b;
}

MicrobenchResults parse_microbench_csv(const std::string& text, const std::string& file) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError(file + ": empty file (expected a microbenchmark CSV with a header row)");
  try {
    Reader in(file, std::make_unique<MemoryByteSource>(text));
    return read_all(in, file);
  } catch (const io::error::base& e) {
    throw InputError(e.what());
  }
}

MicrobenchResults read_microbench_csv(const std::string& path) {
  return parse_microbench_csv(read_file(path), path == "-" ? "<stdin>" : path);
}

void write_microbench_csv(const MicrobenchResults& results, std::ostream& out) {
  for (int i = 0; i < 8; ++i) out << (i ? "," : "") << kMicrobenchColumns[i];
  out << '\n';
  for (const MicrobenchRow& r : results.rows) {
    write_csv_field(out, r.benchmark);
    out << ',';
    write_csv_field(out, r.dtype);
    out << ',';
    write_csv_field(out, r.size);
    out << ',' << number(r.value) << ',';
    write_csv_field(out, r.unit);
    out << ',' << number(r.spread) << ',';
    write_csv_field(out, r.device.empty() ? results.device : r.device);
    out << ',';
    write_csv_field(out, r.notes);
    out << '\n';
  }
}

void apply_microbench(const MicrobenchResults& results, GpuSpec& gpu) {
  // Read and check every figure first, so a bad file leaves gpu untouched.
  const double dram = summary(results, "dram_bw", "", {"GB/s"});
  const double l2 = summary(results, "l2_bw", "", {"GB/s"});
  const double launch = summary(results, "launch_interval", "", {"us", "µs"});
  const double stream_latency = summary(results, "stream_latency", "", {"us", "µs"});
  const double fp32 = summary(results, "fma_fp32", "", {"TFLOP/s"});
  decltype(gpu.measured_gemm_eff) eff;
  for (double& e : eff) e = kUnknown;
  for (DType d : kAllDTypes) {
    const double achieved = summary(results, "gemm_peak", to_string(d), {"TFLOP/s", "TOP/s"});
    const double peak = gpu.peak_tflops(d);
    // Without a datasheet peak there is nothing to express the figure as a fraction of.
    if (known(achieved) && known(peak) && peak > 0) eff[int(d)] = achieved / peak;
  }

  bool applied = false;
  auto set = [&](double& field, double v) {
    if (!known(v)) return;
    field = v;
    applied = true;
  };
  set(gpu.measured_dram_bw_gbps, dram);
  set(gpu.measured_l2_bw_gbps, l2);
  set(gpu.measured_launch_us, launch);
  set(gpu.measured_stream_latency_us, stream_latency);
  set(gpu.measured_fp32_tflops, fp32);
  for (size_t i = 0; i < std::size(eff); ++i) set(gpu.measured_gemm_eff[i], eff[i]);
  if (applied)
    gpu.measured_source = results.source_file.empty() ? "microbench results for " + results.device
                                                      : results.source_file;
}

}  // namespace kcast
