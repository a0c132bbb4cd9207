// Reader of `nsys stats --report cuda_gpu_trace --format csv` (older report name `gputrace`).
// Columns are found by header name, never by position; units come from the header ("Start (ns)",
// "Bytes (MB)", MB = 10^6 B). Captured stdout may hold banner lines before the header: they are
// skipped with io::LineReader on the file's head, then the CSV is streamed with io::CSVReader, one
// row at a time, so --aggregate runs in memory bounded by the distinct kernels.
#include <unordered_map>

#include "calibrate/csv_source.h"
#include "model/error.h"
#include "predict/import/import.h"
#include "predict/import/import_util.h"

namespace kcast {

namespace {

using namespace import_detail;

// Header spellings across nsys versions. A column family lists its unit variants; a bare name
// ("Start", "Bytes") is the oldest spelling and carries the base unit (ns, B).
constexpr std::array<const char*, 34> kCols = {
    "Start (ns)", "Start (us)", "Start (ms)", "Start (s)", "Start",                 // 0-4
    "Duration (ns)", "Duration (us)", "Duration (ms)", "Duration (s)", "Duration",  // 5-9
    "GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ", "Reg/Trd",                        // 10-16
    "StcSMem (MB)", "StcSMem (KB)", "StcSMem (B)", "StcSMem",                        // 17-20
    "DymSMem (MB)", "DymSMem (KB)", "DymSMem (B)", "DymSMem",                        // 21-24
    "Bytes (MB)", "Bytes (KB)", "Bytes (B)", "Bytes (GB)", "Bytes",                  // 25-29
    "Device", "Strm", "Name", "CorrId"};                                              // 30-33
constexpr int kGrid = 10, kRegs = 16, kDevice = 30, kStream = 31, kName = 32;

using Reader = io::CSVReader<kCols.size(), io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>>;

// The first present variant of a column family and its multiplier (0 = family absent).
struct Family {
  int col = -1;
  double scale = 0;
};

Family pick(const Reader& in, int first, int last, bool time) {
  for (int c = first; c <= last; ++c) {
    if (!in.has_column(kCols[c])) continue;
    std::string_view n = kCols[c];
    auto open = n.find('(');
    std::string_view unit = open == std::string_view::npos ? (time ? "ns" : "B")
                                                          : n.substr(open + 1, n.size() - open - 2);
    return {c, time ? time_unit_to_us(unit) : bytes_unit_scale(unit)};
  }
  return {};
}

// Whether a line of the capture is the report's header row.
bool is_header(std::string_view line) {
  return line.find("Name") != std::string_view::npos && line.find(',') != std::string_view::npos &&
         (line.find("Start") != std::string_view::npos || line.find("Duration") != std::string_view::npos);
}

// Index (0-based) of the header line within the file's first bytes.
unsigned find_header(const std::string& head, const std::string& name) {
  return find_header_line(head, name, is_header,
                          "no nsys cuda_gpu_trace header (a CSV line naming 'Start (ns)', 'Duration (ns)' "
                          "and 'Name') in the first lines; is this `nsys stats --report cuda_gpu_trace "
                          "--format csv` output?");
}

void read_rows(Reader& in, unsigned header_line, const std::string& file, const ImportOptions& opt,
               KernelSink& sink) {
  if (opt.step.any()) {
    if (!opt.step.nvtx.empty())
      throw InputError(file + ": option '--nvtx': the nsys CSV report has no NVTX ranges; export the "
                       "report to SQLite (nsys export --type sqlite) and import that");
    throw InputError(file + ": options '--profiler-step' / '--annotation' apply to PyTorch profiler "
                     "(kineto-json) traces; nsys-csv has no such ranges");
  }
  for (unsigned i = 0; i < header_line; ++i) in.next_line();
  read_header_array(in, kCols, std::make_index_sequence<kCols.size()>());
  if (!in.has_column("Name"))
    throw InputError(file + ":" + std::to_string(header_line + 1) + ": header has no 'Name' column");
  const Family start = pick(in, 0, 4, true), dur = pick(in, 5, 9, true);
  const Family stc = pick(in, 17, 20, false), dym = pick(in, 21, 24, false);
  const Family bytes = pick(in, 25, 29, false);
  if (start.col < 0 && dur.col < 0)
    throw InputError(file + ":" + std::to_string(header_line + 1) +
                     ": header has neither a 'Start' nor a 'Duration' column");

  DeviceResolver devices(opt, file);
  const Classifier& cls = classifier(opt);
  std::unordered_map<std::string, KernelClass> classes;  // names repeat: classify each once
  std::string last_device_cell, last_device;

  std::array<char*, kCols.size()> c{};
  while (read_row_array(in, c, std::make_index_sequence<kCols.size()>())) {
    const unsigned line = in.get_file_line();
    auto where = [&](int col) { return CellRef{file, line, kCols[col]}.where(); };
    auto num = [&](int col, double& out) {
      if (col < 0 || !c[col]) return false;
      Num n = parse_num(c[col], true);
      if (n.bad) throw InputError(where(col) + ": '" + trim(c[col]) + "' is not a number");
      if (n.given) out = n.value;
      return n.given;
    };
    Kernel k;
    k.name = c[kName] ? c[kName] : "";
    if (k.name.empty()) throw InputError(where(kName) + ": empty name");
    if (k.name.starts_with("[CUDA memcpy")) {
      k.name = canonical_copy_name(k.name);
      k.cls = KernelClass::memcpy;
    } else if (k.name.starts_with("[CUDA memset")) {
      k.cls = KernelClass::memset;
    } else {
      auto it = classes.find(k.name);
      if (it == classes.end()) it = classes.emplace(k.name, cls.classify(k.name)).first;
      k.cls = it->second;
    }
    double v = 0;
    if (num(start.col, v)) k.start_us = v * start.scale;
    if (num(dur.col, v)) {
      if (v < 0) throw InputError(where(dur.col) + ": negative duration");
      k.duration_us = v * dur.scale;
    }
    for (int i = 0; i < 6; ++i) {
      if (num(kGrid + i, v)) {
        if (v < 0 || v > 1e12) throw InputError(where(kGrid + i) + ": out of range");
        (i < 3 ? k.grid[i] : k.block[i - 3]) = int64_t(v);
      }
    }
    if (num(kRegs, v) && v >= 0 && v < 1e6) k.registers = int64_t(v);
    double smem = 0;
    bool has_smem = false;
    if (num(stc.col, v)) smem += v * stc.scale, has_smem = true;
    if (num(dym.col, v)) smem += v * dym.scale, has_smem = true;
    if (has_smem && smem >= 0 && smem < 1e12) k.shared_bytes = int64_t(smem + 0.5);
    if (k.cls == KernelClass::memcpy || k.cls == KernelClass::memset) {
      if (num(bytes.col, v)) k.bytes = v * bytes.scale;
    }
    if (num(kStream, v) && v >= 0 && v < 9e15) k.stream = int64_t(v);
    if (c[kDevice] && *c[kDevice]) {
      if (last_device_cell != c[kDevice]) {
        last_device_cell = c[kDevice];
        // "NVIDIA A100-SXM4-40GB (0)": the device name, then the device id in parentheses.
        std::string dev = trim(last_device_cell);
        if (auto p = dev.rfind(" ("); p != std::string::npos && dev.back() == ')') dev.resize(p);
        last_device = devices.resolve(dev);
      }
      k.gpu = last_device;
    } else if (devices.overridden()) {
      k.gpu = devices.override_name();
    }
    sink.add(std::move(k));
  }
}

}  // namespace

void read_nsys_csv(const std::string& path, const ImportOptions& opt, KernelSink& sink) {
  const unsigned header = find_header(read_head(path), path);
  try {
    Reader in(path);
    read_rows(in, header, path, opt, sink);
  } catch (const io::error::base& e) {
    throw InputError(e.what());
  }
}

void parse_nsys_csv(const std::string& bytes, const std::string& name, const ImportOptions& opt,
                    KernelSink& sink) {
  const unsigned header = find_header(bytes.substr(0, kHeadBytes), name);
  try {
    Reader in(name, std::make_unique<MemoryByteSource>(bytes));
    read_rows(in, header, name, opt, sink);
  } catch (const io::error::base& e) {
    throw InputError(e.what());
  }
}

}  // namespace kcast
