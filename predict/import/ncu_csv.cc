// Reader of Nsight Compute CSV (`ncu --csv`): the `--page details` long form (one row per metric,
// grouped by the kernel's ID) and the `--page raw` wide form (one column per metric, a second header
// row of units). Every field is quoted; numbers may carry thousands separators ("1,234.5"); values
// may be "n/a"; units scale automatically (nsecond/usecond/msecond, byte/Kbyte/Mbyte/Gbyte, decimal).
// Kept per kernel: duration, DRAM bytes read + written, FLOPs from the SASS add/mul/fma counters
// (FMA = 2), launch shape and registers. ncu records no start times: rows keep the ID order.
// ncu's "Device" column is the device index, not its name, so the gpu column needs --gpu.
#include <cmath>
#include <map>

#include "io/csv_source.h"
#include "model/error.h"
#include "predict/import/import.h"
#include "predict/import/import_util.h"

namespace kcast {

namespace {

using namespace import_detail;

constexpr std::array<const char*, 30> kCols = {
    "ID", "Kernel Name", "Block Size", "Grid Size", "Device", "CC", "Stream",  // 0-6
    "Metric Name", "Metric Unit", "Metric Value",                             // 7-9 (long form)
    // raw form: one column per metric (10-29)
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__bytes.sum",
    "sm__sass_thread_inst_executed_op_dadd_pred_on.sum", "sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum", "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "sm__sass_thread_inst_executed_op_hadd_pred_on.sum", "sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "sm__inst_executed_pipe_tensor.sum",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", "launch__grid_size",
    "launch__block_size", "launch__registers_per_thread", "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic"};
constexpr int kId = 0, kName = 1, kBlock = 2, kGrid = 3, kDevice = 4, kCC = 5, kStream = 6;
constexpr int kMetric = 7, kUnit = 8, kValue = 9, kFirstRaw = 10;

using Reader = io::CSVReader<kCols.size(), io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>>;

// What the rows of one kernel (one ID) say.
struct Partial {
  std::string name;
  int64_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  std::string device, cc;
  int64_t stream = -1;
  double duration_us = kUnknown;
  double dram_read = kUnknown, dram_write = kUnknown, dram_total = kUnknown;
  double flops[3] = {kUnknown, kUnknown, kUnknown};  // fp64, fp32, fp16
  double tensor = kUnknown;
  double grid_total = kUnknown, block_total = kUnknown, regs = kUnknown;
  double smem_static = kUnknown, smem_dynamic = kUnknown;
};

void add_to(double& slot, double v) { slot = known(slot) ? slot + v : v; }

struct Ctx {
  const std::string& file;
  unsigned line;
  std::string where(int col) const { return CellRef{file, line, kCols[col]}.where(); }
};

// "(256, 1, 1)" / "(32,32,1)" -> three integers.
void parse_dim3(const char* cell, int64_t out[3], const Ctx& at, int col) {
  if (!cell || !*cell) return;
  std::string s = trim(cell);
  if (s == "n/a") return;
  int64_t v[3] = {0, 0, 0};
  int n = 0;
  int64_t cur = -1;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      cur = (cur < 0 ? 0 : cur) * 10 + (c - '0');
      if (cur > (int64_t(1) << 40)) throw InputError(at.where(col) + ": '" + s + "' is out of range");
    } else if (c == ',' || c == ')') {
      if (cur < 0 || n >= 3) throw InputError(at.where(col) + ": '" + s + "' is not '(x, y, z)'");
      v[n++] = cur, cur = -1;
    } else if (c != '(' && c != ' ') {
      throw InputError(at.where(col) + ": '" + s + "' is not '(x, y, z)'");
    }
  }
  if (n != 3) throw InputError(at.where(col) + ": '" + s + "' is not '(x, y, z)'");
  for (int i = 0; i < 3; ++i) out[i] = v[i];
}

// One metric value into the partial kernel. `metric` is the raw name (or the details page's human
// name), `unit` as ncu printed it; `col` names the cell in errors.
void apply(Partial& p, std::string_view metric, std::string unit, const char* value, const Ctx& at, int col) {
  if (auto slash = unit.find('/'); slash != std::string::npos) unit.resize(slash);  // "byte/block"
  Num n = parse_num(value ? value : "", true);
  if (n.bad) throw InputError(at.where(col) + ": '" + trim(value) + "' is not a number");
  if (!n.given) return;
  const double v = n.value;
  auto finite = [&](double x) {
    if (!std::isfinite(x)) throw InputError(at.where(col) + ": '" + trim(value) + "' is out of range");
    return x;
  };
  auto time = [&]() {
    double s = unit.empty() ? 1e-3 : time_unit_to_us(unit);
    if (s == 0) throw InputError(at.where(col) + ": unknown time unit '" + unit + "' for " + std::string(metric));
    return finite(v * s);
  };
  auto bytes = [&]() {
    double s = unit.empty() ? 1 : bytes_unit_scale(unit);
    if (s == 0) throw InputError(at.where(col) + ": unknown byte unit '" + unit + "' for " + std::string(metric));
    return finite(v * s);
  };
  if (metric == "gpu__time_duration.sum" || metric == "Duration") {
    p.duration_us = time();
  } else if (metric == "dram__bytes_read.sum") {
    p.dram_read = bytes();
  } else if (metric == "dram__bytes_write.sum") {
    p.dram_write = bytes();
  } else if (metric == "dram__bytes.sum") {
    p.dram_total = bytes();
  } else if (metric.starts_with("sm__sass_thread_inst_executed_op_") && metric.ends_with("_pred_on.sum")) {
    std::string_view op = metric.substr(std::string_view("sm__sass_thread_inst_executed_op_").size());
    op = op.substr(0, op.size() - std::string_view("_pred_on.sum").size());
    if (op.size() != 4) return;
    const int t = op[0] == 'd' ? 0 : op[0] == 'f' ? 1 : op[0] == 'h' ? 2 : -1;
    const std::string_view kind = op.substr(1);
    if (t < 0 || (kind != "add" && kind != "mul" && kind != "fma")) return;
    add_to(p.flops[t], finite(kind == "fma" ? 2 * v : v));
  } else if (metric == "sm__inst_executed_pipe_tensor.sum" ||
             metric == "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed") {
    add_to(p.tensor, v);
  } else if (metric == "launch__grid_size" || metric == "Grid Size") {
    p.grid_total = v;
  } else if (metric == "launch__block_size" || metric == "Block Size") {
    p.block_total = v;
  } else if (metric == "launch__registers_per_thread" || metric == "Registers Per Thread") {
    p.regs = v;
  } else if (metric == "launch__shared_mem_per_block_static" || metric == "Static Shared Memory Per Block") {
    p.smem_static = bytes();
  } else if (metric == "launch__shared_mem_per_block_dynamic" || metric == "Dynamic Shared Memory Per Block") {
    p.smem_dynamic = bytes();
  }
}

// Identity columns of a row (the same on every row of one ID).
void identity(Partial& p, const std::array<char*, kCols.size()>& c, const Ctx& at) {
  p.name = c[kName] ? trim(c[kName]) : "";
  if (p.name.empty()) throw InputError(at.where(kName) + ": empty kernel name");
  parse_dim3(c[kBlock], p.block, at, kBlock);
  parse_dim3(c[kGrid], p.grid, at, kGrid);
  p.device = c[kDevice] ? trim(c[kDevice]) : "";
  p.cc = c[kCC] ? trim(c[kCC]) : "";
  Num s = parse_num(c[kStream] ? c[kStream] : "");
  if (s.given && !s.bad && s.value >= 0 && s.value < 9e15) p.stream = int64_t(s.value);
}

class Emitter {
 public:
  Emitter(const std::string& file, const ImportOptions& opt, KernelSink& sink)
      : file_(file), opt_(opt), sink_(sink), devices_(opt, file), cls_(classifier(opt)) {}

  void emit(const Partial& p) {
    Kernel k;
    k.name = p.name;
    k.cls = cls_.classify(k.name);
    for (int i = 0; i < 3; ++i) k.grid[i] = p.grid[i], k.block[i] = p.block[i];
    // launch__grid_size / launch__block_size are totals: a 1-D launch where no (x, y, z) was given.
    auto total = [](double v) { return known(v) && v >= 0 && v < 9e15; };
    if (k.grid[0] == 0 && total(p.grid_total)) k.grid[0] = int64_t(p.grid_total), k.grid[1] = k.grid[2] = 1;
    if (k.block[0] == 0 && total(p.block_total)) k.block[0] = int64_t(p.block_total), k.block[1] = k.block[2] = 1;
    if (total(p.regs)) k.registers = int64_t(p.regs);
    double smem = 0;
    if (known(p.smem_static)) smem += p.smem_static;
    if (known(p.smem_dynamic)) smem += p.smem_dynamic;
    if (smem > 0 && smem < 9e15) k.shared_bytes = int64_t(std::llround(smem));
    k.stream = p.stream;
    k.duration_us = p.duration_us;
    if (known(p.dram_read) || known(p.dram_write))
      k.bytes = (known(p.dram_read) ? p.dram_read : 0) + (known(p.dram_write) ? p.dram_write : 0);
    else if (known(p.dram_total))
      k.bytes = p.dram_total;
    double flops = 0;
    int dominant = -1;
    for (int t = 0; t < 3; ++t) {
      if (!known(p.flops[t])) continue;
      flops += p.flops[t];
      if (dominant < 0 || p.flops[t] > p.flops[dominant]) dominant = t;
    }
    if (dominant >= 0 && std::isfinite(flops)) k.flops = flops;
    if (!std::isfinite(k.bytes)) k.bytes = kUnknown;  // sums of huge counters
    // Bytes from the DRAM counters are the kernel's DRAM traffic: what hit in L2 is already out of
    // them (and Nsight Compute's default --cache-control all flushes the caches before each kernel),
    // so no L2 share may be taken off them again.
    k.l2_cold = known(k.bytes);
    const bool tensor = known(p.tensor) && p.tensor > 0;
    // Hints: a kernel the name rules do not place but that drives the tensor pipe is a matrix
    // product; without tensor work, the SIMT op counts tell the math type.
    if (tensor && k.cls == KernelClass::other) k.cls = KernelClass::gemm;
    if (!tensor && dominant >= 0 && flops > 0)
      k.dtype = dominant == 0 ? DType::fp64 : dominant == 1 ? DType::fp32 : DType::fp16;
    else if (auto d = dtype_from_kernel_name(k.name))
      k.dtype = *d;
    if (devices_.overridden()) {
      k.gpu = devices_.override_name();
    } else if (!p.device.empty() && p.device.find_first_not_of("0123456789") != std::string::npos) {
      DeviceProps props;
      props.compute_capability = p.cc;
      k.gpu = devices_.resolve(p.device, props);
    } else if (!warned_) {
      warned_ = true;
      warn(opt_, file_ + ": ncu records the device index only (compute capability " +
                     (p.cc.empty() ? std::string("unknown") : p.cc) +
                     "); the gpu column is left empty (use --gpu NAME)");
    }
    sink_.add(std::move(k));
  }

 private:
  const std::string& file_;
  const ImportOptions& opt_;
  KernelSink& sink_;
  DeviceResolver devices_;
  const Classifier& cls_;
  bool warned_ = false;
};

bool is_header(std::string_view line) {
  return line.find("Kernel Name") != std::string_view::npos &&
         (line.find("\"ID\"") != std::string_view::npos || line.starts_with("ID,"));
}

void read_rows(Reader& in, unsigned header_line, const std::string& file, const ImportOptions& opt,
               KernelSink& sink) {
  if (opt.step.any())
    throw InputError(file + ": step selection (--nvtx / --profiler-step / --annotation) is not "
                     "available for ncu-csv input (filter with ncu --nvtx-include instead)");
  for (unsigned i = 0; i < header_line; ++i) in.next_line();
  read_header_array(in, kCols, std::make_index_sequence<kCols.size()>());
  const std::string header_at = file + ":" + std::to_string(header_line + 1);
  if (!in.has_column("Kernel Name")) throw InputError(header_at + ": header has no 'Kernel Name' column");
  const bool long_form = in.has_column("Metric Name");
  if (long_form && (!in.has_column("Metric Value") || !in.has_column("ID")))
    throw InputError(header_at + ": header has 'Metric Name' but no 'Metric Value' or 'ID' column");

  Emitter out(file, opt, sink);
  std::array<char*, kCols.size()> c{};
  std::map<int64_t, Partial> by_id;  // long form: a kernel's metrics are spread over rows
  std::array<std::string, kCols.size()> units;
  bool first = true;
  while (read_row_array(in, c, std::make_index_sequence<kCols.size()>())) {
    const Ctx at{file, in.get_file_line()};
    const bool no_id = !c[kId] || trim(c[kId]).empty();
    if (!long_form && first && no_id) {  // raw form: the units row
      for (int i = kFirstRaw; i < int(kCols.size()); ++i) units[size_t(i)] = c[i] ? trim(c[i]) : "";
      first = false;
      continue;
    }
    first = false;
    int64_t id = -1;
    if (c[kId]) {
      Num n = parse_num(c[kId], true);
      if (n.bad || (n.given && (n.value < 0 || n.value > 9e15)))
        throw InputError(at.where(kId) + ": '" + trim(c[kId]) + "' is not a kernel ID");
      if (n.given) id = int64_t(n.value);
    }
    if (long_form) {
      if (id < 0) throw InputError(at.where(kId) + ": missing kernel ID");
      auto [it, fresh] = by_id.try_emplace(id);
      if (fresh) identity(it->second, c, at);
      const std::string metric = c[kMetric] ? trim(c[kMetric]) : "";
      apply(it->second, metric, c[kUnit] ? trim(c[kUnit]) : "", c[kValue], at, kValue);
    } else {
      Partial p;
      identity(p, c, at);
      for (int i = kFirstRaw; i < int(kCols.size()); ++i)
        if (c[i]) apply(p, kCols[size_t(i)], units[size_t(i)], c[i], at, i);
      out.emit(p);
    }
  }
  for (const auto& [id, p] : by_id) out.emit(p);
}

}  // namespace

void read_ncu_csv(const std::string& path, const ImportOptions& opt, KernelSink& sink) {
  const unsigned header = find_header_line(read_head(path), path, is_header,
                                           "no ncu CSV header (a line naming \"ID\" and \"Kernel Name\")");
  try {
    Reader in(path);
    read_rows(in, header, path, opt, sink);
  } catch (const io::error::base& e) {
    throw InputError(e.what());
  }
}

void parse_ncu_csv(const std::string& bytes, const std::string& name, const ImportOptions& opt,
                   KernelSink& sink) {
  const unsigned header = find_header_line(bytes.substr(0, kHeadBytes), name, is_header,
                                           "no ncu CSV header (a line naming \"ID\" and \"Kernel Name\")");
  try {
    Reader in(name, std::make_unique<MemoryByteSource>(bytes));
    read_rows(in, header, name, opt, sink);
  } catch (const io::error::base& e) {
    throw InputError(e.what());
  }
}

}  // namespace kcast
