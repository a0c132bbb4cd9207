// Reader of `nsys stats --report cuda_gpu_trace --format csv` (older report name `gputrace`).
// Columns are found by header name, never by position; units come from the header ("Start (ns)",
// "Bytes (MB)", MB = 10^6 B). Captured stdout may hold banner lines before the header: they are
// skipped with io::LineReader on the file's head, then the CSV is streamed with io::CSVReader, one
// row at a time, so --aggregate runs in memory bounded by the distinct kernels. Files of tens of MB
// are split at line boundaries and parsed on several threads (read_parallel).
#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "io/csv_chunks.h"
#include "io/csv_source.h"
#include "io/mapped_file.h"
#include "model/error.h"
#include "model/parallel_for.h"
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

void check_step_selection(const std::string& file, const ImportOptions& opt) {
  if (!opt.step.any()) return;
  if (!opt.step.nvtx.empty())
    throw InputError(file + ": option '--nvtx': the nsys CSV report has no NVTX ranges; export the "
                     "report to SQLite (nsys export --type sqlite) and import that");
  throw InputError(file + ": options '--profiler-step' / '--annotation' apply to PyTorch profiler "
                   "(kineto-json) traces; nsys-csv has no such ranges");
}

// The Device cells' GPUs: "NVIDIA A100-SXM4-40GB (0)" is the device name, then the device id in
// parentheses. Rows repeat one device, so the last resolution is kept.
class DeviceCells {
 public:
  explicit DeviceCells(DeviceResolver& devices) : devices_(devices) {}
  const std::string& gpu_of(const char* cell) {
    if (last_cell_ != cell) {
      last_cell_ = cell;
      std::string dev = trim(last_cell_);
      if (auto p = dev.rfind(" ("); p != std::string::npos && dev.back() == ')') dev.resize(p);
      last_gpu_ = devices_.resolve(dev);
    }
    return last_gpu_;
  }

 private:
  DeviceResolver& devices_;
  std::string last_cell_, last_gpu_;
};

// Reads the rows of `in` into `sink`. The header is the line after `header_line` skipped lines,
// except with `line_base`: then `in` is a chunk of the file read in parallel, which starts with a
// copy of the header and then its own rows, and `line_base` is the file line number before them.
void read_rows(Reader& in, unsigned header_line, std::optional<unsigned> line_base, const std::string& file,
               const ImportOptions& opt, DeviceResolver& devices, KernelSink& sink) {
  if (!line_base)
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
  if (line_base) in.set_file_line(*line_base);
  const Classifier& cls = classifier(opt);
  struct NameInfo {
    KernelClass cls;
    std::optional<DType> dtype;
  };
  std::unordered_map<std::string, NameInfo> names;  // names repeat: look at each once
  DeviceCells device_cells(devices);

  std::array<char*, kCols.size()> c{};
  while (read_row_array(in, c, std::make_index_sequence<kCols.size()>())) {
    const unsigned line = in.get_file_line();
    auto where = [&](int col) { return CellRef{file, line, kCols[col]}.where(); };
    auto num = [&](int col, double& out) {
      if (col < 0 || !c[col]) return false;
      Num n = parse_num_cell(c[col], true);
      if (n.bad) throw InputError(where(col) + ": '" + trim(c[col]) + "' is not a number");
      if (n.given) out = n.value;
      return n.given;
    };
    // A value that overflows once scaled to µs / bytes is as bad as a malformed one.
    auto scaled = [&](int col, double v) {
      if (!std::isfinite(v)) throw InputError(where(col) + ": '" + trim(c[col]) + "' is out of range");
      return v;
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
      auto it = names.find(k.name);
      if (it == names.end())
        it = names.emplace(k.name, NameInfo{cls.classify(k.name), dtype_from_kernel_name(k.name)}).first;
      k.cls = it->second.cls;
      if (it->second.dtype) k.dtype = *it->second.dtype;
    }
    double v = 0;
    if (num(start.col, v)) k.start_us = scaled(start.col, v * start.scale);
    if (num(dur.col, v)) {
      if (v < 0) throw InputError(where(dur.col) + ": negative duration");
      k.duration_us = scaled(dur.col, v * dur.scale);
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
      if (num(bytes.col, v)) k.bytes = scaled(bytes.col, v * bytes.scale);
    }
    if (num(kStream, v) && v >= 0 && v < 9e15) k.stream = int64_t(v);
    if (c[kDevice] && *c[kDevice]) {
      k.gpu = device_cells.gpu_of(c[kDevice]);
    } else if (devices.overridden()) {
      k.gpu = devices.override_name();
    }
    sink.add(std::move(k));
  }
}

constexpr size_t kMinChunkBytes = size_t(16) << 20;
constexpr unsigned kMaxThreads = 4;  // each reader holds fccp's 48 MiB buffer

// How a parallel read ended: every part in the sink; not attempted (small, not a regular file, a sink
// that cannot be split); or a chunk failed, some earlier parts perhaps already in the sink.
enum class ParallelRead { done, not_split, failed };

// Large captures are split at line boundaries and parsed on several threads, each into its own
// part of the sink, merged in file order. When a chunk fails, the caller's sequential read gives
// the error with its true line number.
ParallelRead read_parallel(const std::string& path, const std::string& head, unsigned header_line,
                   const ImportOptions& opt, DeviceResolver& devices, KernelSink& sink) {
  if (opt.threads == 1 || !sink.make_part()) return ParallelRead::not_split;
  // Where the header line starts and the data begins (the header is within the head).
  size_t header_at = 0;
  for (unsigned i = 0; i < header_line; ++i) {
    header_at = head.find('\n', header_at);
    if (header_at == std::string::npos) return ParallelRead::not_split;
    ++header_at;
  }
  const size_t header_end = head.find('\n', header_at);
  if (header_end == std::string::npos) return ParallelRead::not_split;
  const MappedFile mapped(path);
  if (!mapped.valid() || mapped.bytes().size() <= header_end + 1) return ParallelRead::not_split;
  const std::string_view bytes = mapped.bytes();
  const std::string_view header = bytes.substr(header_at, header_end + 1 - header_at);
  const std::string_view rows = bytes.substr(header_end + 1);
  // One thread per core, each reading chunks of about kMinChunkBytes in turn: a reader's 48 MiB buffer
  // is touched only as far as its chunk, and the next reader on the thread takes the same memory.
  const size_t threads = opt.threads ? opt.threads : csv_chunk_count(rows.size(), kMinChunkBytes, kMaxThreads);
  if (threads <= 1) return ParallelRead::not_split;
  const std::vector<std::string_view> chunks =
      split_at_line_ends(rows, opt.threads ? threads : std::max(threads, rows.size() / kMinChunkBytes));
  const size_t parts = chunks.size();

  // Each chunk parses into its own part, and the parts go into the sink in file order as soon as the
  // parts before them are in (a streaming sink writes them out then, and their memory serves the
  // next chunks). Line numbers inside a chunk are only known relative to it, so on an error the file
  // is read again sequentially, which reports the first error in file order with its true line
  // number (errors are rare; no pass over the file just to count lines).
  std::vector<std::unique_ptr<KernelSink>> out(parts);
  for (auto& part : out) part = sink.make_part();
  std::vector<char> failed(parts, 0), done(parts, 0);
  std::mutex mu;
  size_t next = 0;  // the first part not yet in the sink
  parallel_for(parts, unsigned(threads), [&](size_t k) {
    try {
      Reader in(path, std::make_unique<CsvChunkSource>(header, chunks[k]));
      read_rows(in, header_line, header_line + 1, path, opt, devices, *out[k]);
    } catch (...) {
      failed[k] = 1;
    }
    std::lock_guard<std::mutex> lock(mu);
    done[k] = 1;
    for (; next < parts && done[next] && !failed[next]; ++next) {
      sink.merge(std::move(*out[next]));
      out[next].reset();
    }
  });
  return next == parts ? ParallelRead::done : ParallelRead::failed;
}

}  // namespace

void read_nsys_csv(const std::string& path, const ImportOptions& opt, KernelSink& sink) {
  const std::string head = read_head(path);
  const unsigned header = find_header(head, path);
  check_step_selection(path, opt);
  DeviceResolver devices(opt, path);
  auto read_whole = [&](KernelSink& into) {
    try {
      Reader in(path);
      read_rows(in, header, std::nullopt, path, opt, devices, into);
    } catch (const io::error::base& e) {
      throw InputError(e.what());
    }
  };
  switch (read_parallel(path, head, header, opt, devices, sink)) {
    case ParallelRead::done: return;
    case ParallelRead::not_split: read_whole(sink); return;
    case ParallelRead::failed: break;
  }
  // Parts before the failed chunk may be in the sink already: the error from a read that keeps nothing.
  struct Discard : KernelSink {
    void add(Kernel&&) override {}
  } discard;
  read_whole(discard);
  throw std::logic_error(path + ": a chunk failed that the whole file reads without error");
}

void parse_nsys_csv(const std::string& bytes, const std::string& name, const ImportOptions& opt,
                    KernelSink& sink) {
  const unsigned header = find_header(bytes.substr(0, kHeadBytes), name);
  check_step_selection(name, opt);
  DeviceResolver devices(opt, name);
  try {
    Reader in(name, std::make_unique<MemoryByteSource>(bytes));
    read_rows(in, header, std::nullopt, name, opt, devices, sink);
  } catch (const io::error::base& e) {
    throw InputError(e.what());
  }
}

}  // namespace kcast
