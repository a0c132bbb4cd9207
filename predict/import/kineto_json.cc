// Reader of PyTorch profiler / Kineto Chrome traces (export_chrome_trace; plain or gzip).
// GPU work: `ph:"X"` events with cat kernel / gpu_memcpy / gpu_memset (older: Kernel / Memcpy /
// Memset), ts and dur in µs. The device comes from deviceProperties (older: computeProperties).
// GEMM shapes: a CPU op (aten::mm, addmm, _scaled_mm, bmm, baddbmm, linear, matmul, conv*) with "Input Dims"
// shares its "External id" with the cuda runtime launch it makes, and that launch shares its
// "correlation" with the kernel; the shape goes to the gemm/conv kernels the op launched, the dtype
// to all of them. Every JSON field is type-checked before use: a trace is untrusted input.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <istream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <streambuf>
#include <unordered_map>

#include "io/json_input.h"
#include "model/error.h"
#include "predict/import/import.h"
#include "predict/import/import_util.h"

namespace kcast {

namespace {

using namespace import_detail;
using json = nlohmann::json;

// Decompressed traces beyond this are refused rather than exhausting memory.
constexpr size_t kMaxTraceBytes = size_t(16) << 30;

std::string gunzip(const std::string& bytes, const std::string& name) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) throw InputError(name + ": cannot initialise zlib");
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = uInt(std::min<size_t>(bytes.size(), std::numeric_limits<uInt>::max()));
  int rc = Z_OK;
  char buf[1 << 16];
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (out.size() > kMaxTraceBytes) break;
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // concatenated gzip members
      continue;
    }
    if (rc != Z_OK) break;
    if (z.avail_in == 0 && z.avail_out != 0) break;
  }
  const size_t consumed = bytes.size() - z.avail_in;
  inflateEnd(&z);
  if (out.size() > kMaxTraceBytes) throw InputError(name + ": decompressed trace exceeds 16 GiB");
  if (rc != Z_STREAM_END)
    throw InputError(name + ": gzip data is " + (rc == Z_OK || rc == Z_BUF_ERROR ? "truncated" : "corrupt") +
                     " (at compressed byte " + std::to_string(consumed) + ")");
  return out;
}

// gzerror() prefixes the path itself; keep one copy of it.
std::string gz_message(const std::string& path, const char* msg) {
  std::string m = msg ? msg : "";
  if (m.starts_with(path + ": ")) m = m.substr(path.size() + 2);
  return path + ": " + (m.empty() ? "read error" : m) + " (gzip data truncated or corrupt)";
}

// --- typed access to untrusted JSON -------------------------------------------------------------

const json* field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}
bool num(const json* v, double& out) {
  if (!v || !v->is_number()) return false;
  double d = v->get<double>();
  if (!std::isfinite(d)) return false;
  out = d;
  return true;
}
bool integer(const json* v, int64_t& out) {
  double d = 0;
  if (!num(v, d) || std::fabs(d) > 9e15) return false;
  out = int64_t(d);
  return true;
}
std::string str(const json* v) { return v && v->is_string() ? v->get<std::string>() : std::string(); }

// "[2, 2]" / "1" / "same" from "Concrete Inputs"; empty when not a list of integers.
std::vector<int64_t> int_list(const std::string& s) {
  std::vector<int64_t> out;
  int64_t cur = 0;
  bool in_num = false, neg = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      if (cur > (int64_t(1) << 40)) return {};
      cur = cur * 10 + (c - '0');
      in_num = true;
    } else if (c == '-' && !in_num) {
      neg = true;
    } else if (c == ',' || c == ']' || c == ' ' || c == '[') {
      if (in_num) out.push_back(neg ? -cur : cur);
      cur = 0, in_num = false, neg = false;
    } else {
      return {};  // "False", "same", ...
    }
  }
  if (in_num) out.push_back(neg ? -cur : cur);
  return out;
}

std::optional<DType> torch_dtype(const std::string& t) {
  if (t == "float") return DType::fp32;
  if (t == "c10::Half") return DType::fp16;
  if (t == "c10::BFloat16") return DType::bf16;
  if (t == "double") return DType::fp64;
  if (t.starts_with("c10::Float8")) return DType::fp8;
  if (t.starts_with("c10::Float4")) return DType::fp4;  // Float4_e2m1fn_x2: two values per byte
  return std::nullopt;
}

// What a CPU op tells about the kernels it launches.
struct OpInfo {
  std::optional<DType> dtype;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool has_shape() const { return m > 0 && n > 0 && k > 0; }
};

constexpr int64_t kMaxDim = int64_t(1) << 40;

bool sane(const std::vector<int64_t>& d) {
  for (int64_t v : d)
    if (v <= 0 || v > kMaxDim) return false;
  return true;
}
int64_t prod(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) {
    if (p > kMaxDim / std::max<int64_t>(d[i], 1)) return 0;
    p *= d[i];
  }
  return p;
}

// The implicit-GEMM shape of a convolution. dims: input [N, C, spatial...], weight [Cout, Cin/groups,
// kernel...]. Stride/padding/dilation come from "Concrete Inputs" at the op's argument positions;
// when the trace did not record them (no "Concrete Inputs"), the output is assumed to keep the
// input's spatial size ("same" padding, stride 1), which is exact for the common 3x3/pad-1 and 1x1
// convolutions and an estimate otherwise.
void conv_shape(const std::string& op, const std::vector<std::vector<int64_t>>& dims,
                const std::vector<std::string>& concrete, OpInfo& info) {
  if (dims.size() < 2) return;
  const auto& in = dims[0];
  const auto& w = dims[1];
  if (in.size() < 3 || in.size() != w.size() || !sane(in) || !sane(w)) return;
  const size_t sp = in.size() - 2;
  int stride_i = -1, pad_i = -1, dil_i = -1;
  if (op == "aten::cudnn_convolution") {
    pad_i = 2, stride_i = 3, dil_i = 4;  // (self, weight, padding, stride, dilation, groups, ...)
  } else {
    stride_i = 3, pad_i = 4, dil_i = 5;  // conv*d / convolution / _convolution (input, weight, bias, ...)
  }
  auto arg = [&](int i) -> std::vector<int64_t> {
    if (i < 0 || size_t(i) >= concrete.size()) return {};
    auto v = int_list(concrete[size_t(i)]);
    if (v.size() == 1) v.assign(sp, v[0]);
    return v.size() == sp ? v : std::vector<int64_t>{};
  };
  std::vector<int64_t> stride = arg(stride_i), pad = arg(pad_i), dil = arg(dil_i);
  const bool valid_pad = pad_i >= 0 && size_t(pad_i) < concrete.size() && concrete[size_t(pad_i)] == "valid";
  int64_t out_spatial = 1;
  for (size_t i = 0; i < sp; ++i) {
    const int64_t h = in[2 + i], kh = w[2 + i];
    int64_t o = h;  // assumed 'same' when stride/padding are not recorded
    if (!stride.empty() || !pad.empty() || valid_pad) {
      const int64_t s = stride.empty() ? 1 : stride[i];
      const int64_t p = valid_pad ? 0 : (pad.empty() ? 0 : pad[i]);
      const int64_t d = dil.empty() ? 1 : dil[i];
      constexpr int64_t kMaxArg = int64_t(1) << 20;  // keeps d * (kh - 1) far from overflow
      if (s <= 0 || p < 0 || d <= 0 || s > kMaxArg || p > kMaxArg || d > kMaxArg || kh > kMaxArg) return;
      const int64_t span = h + 2 * p - d * (kh - 1) - 1;
      if (span < 0) return;
      o = span / s + 1;
    }
    if (o <= 0 || out_spatial > kMaxDim / o) return;
    out_spatial *= o;
  }
  if (in[0] > kMaxDim / out_spatial) return;
  const int64_t m = in[0] * out_spatial;
  const int64_t k = prod(w, 1, w.size());
  if (m <= 0 || k <= 0 || m > kMaxDim) return;
  info.m = m, info.n = w[0], info.k = k;
}

OpInfo op_info(const std::string& op, const json& args) {
  OpInfo info;
  std::vector<std::vector<int64_t>> dims;
  if (const json* d = field(args, "Input Dims"); d && d->is_array()) {
    for (const json& t : *d) {
      std::vector<int64_t> v;
      if (t.is_array())
        for (const json& x : t) {
          int64_t i = 0;
          v.push_back(integer(&x, i) ? i : -1);
        }
      dims.push_back(std::move(v));
    }
  }
  std::vector<std::string> types, concrete;
  if (const json* t = field(args, "Input type"); t && t->is_array())
    for (const json& x : *t) types.push_back(x.is_string() ? x.get<std::string>() : "");
  if (const json* c = field(args, "Concrete Inputs"); c && c->is_array())
    for (const json& x : *c) concrete.push_back(x.is_string() ? x.get<std::string>() : "");
  auto dim = [&](size_t i) -> const std::vector<int64_t>& {
    static const std::vector<int64_t> none;
    return i < dims.size() && sane(dims[i]) ? dims[i] : none;
  };
  auto type = [&](size_t i) { return i < types.size() ? torch_dtype(types[i]) : std::nullopt; };

  if (op == "aten::mm") {
    const auto &a = dim(0), &b = dim(1);
    if (a.size() == 2 && b.size() == 2 && a[1] == b[0]) info.m = a[0], info.k = a[1], info.n = b[1];
    info.dtype = type(0);
  } else if (op == "aten::addmm") {
    const auto &a = dim(1), &b = dim(2);
    if (a.size() == 2 && b.size() == 2 && a[1] == b[0]) info.m = a[0], info.k = a[1], info.n = b[1];
    info.dtype = type(1);
  } else if (op == "aten::_scaled_mm") {
    // torch._scaled_mm(a [M, K], b [K, N], scale_a, scale_b, ...): FP8, or FP4 packed two values per
    // byte along K (Float4_e2m1fn_x2: the dims count bytes, so K is twice the recorded inner dim).
    const auto &a = dim(0), &b = dim(1);
    info.dtype = type(0);
    const int64_t pack = info.dtype == DType::fp4 && types[0].ends_with("_x2") ? 2 : 1;
    if (a.size() == 2 && b.size() == 2 && a[1] == b[0]) info.m = a[0], info.k = a[1] * pack, info.n = b[1];
  } else if (op == "aten::bmm" || op == "aten::baddbmm") {
    const size_t o = op == "aten::bmm" ? 0 : 1;
    const auto &a = dim(o), &b = dim(o + 1);
    if (a.size() == 3 && b.size() == 3 && a[0] == b[0] && a[2] == b[1])
      info.batch = a[0], info.m = a[1], info.k = a[2], info.n = b[2];
    info.dtype = type(o);
  } else if (op == "aten::linear") {
    const auto &x = dim(0), &w = dim(1);
    if (!x.empty() && w.size() == 2 && x.back() == w[1])
      info.m = prod(x, 0, x.size() - 1), info.k = w[1], info.n = w[0];
    info.dtype = type(0);
  } else if (op == "aten::matmul") {
    const auto &a = dim(0), &b = dim(1);
    if (a.size() >= 2 && b.size() == 2 && a.back() == b[0]) {
      info.m = prod(a, 0, a.size() - 1), info.k = a.back(), info.n = b[1];
    } else if (a.size() >= 3 && b.size() >= 3 && a.back() == b[b.size() - 2]) {
      info.batch = prod(a, 0, a.size() - 2), info.m = a[a.size() - 2], info.k = a.back(), info.n = b.back();
    }
    info.dtype = type(0);
  } else if (op == "aten::conv1d" || op == "aten::conv2d" || op == "aten::conv3d" ||
             op == "aten::convolution" || op == "aten::_convolution" || op == "aten::cudnn_convolution") {
    conv_shape(op, dims, concrete, info);
    info.dtype = type(0);
  } else {
    info.dtype = type(0);
  }
  if (info.batch <= 0 || info.m <= 0 || info.n <= 0 || info.k <= 0) info.batch = 1, info.m = info.n = info.k = 0;
  return info;
}

enum class Kind { none, kernel, memcpy, memset, runtime, cpu_op, annotation, gpu_annotation };

Kind kind_of(const std::string& cat) {
  if (cat == "kernel" || cat == "Kernel") return Kind::kernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return Kind::memcpy;
  if (cat == "gpu_memset" || cat == "Memset") return Kind::memset;
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime" || cat == "Driver")
    return Kind::runtime;
  if (cat == "cpu_op" || cat == "Operator") return Kind::cpu_op;
  if (cat == "user_annotation") return Kind::annotation;
  if (cat == "gpu_user_annotation") return Kind::gpu_annotation;
  return Kind::none;
}

struct Range {
  double begin, end;
  bool contains(double t) const { return t >= begin && t <= end; }
};

struct Launch {
  double ts;
  int64_t external_id;
};

// Devices: id -> canonical GPU name, from the trace's deviceProperties (or computeProperties).
std::unordered_map<int64_t, std::string> gpu_names(const json& root, DeviceResolver& devices) {
  std::unordered_map<int64_t, std::string> gpu_of;
  for (const char* key : {"deviceProperties", "computeProperties"}) {
    const json* props = field(root, key);
    if (!props || !props->is_array()) continue;
    int64_t index = 0;
    for (const json& d : *props) {
      int64_t id = index++;
      if (!d.is_object()) continue;
      integer(field(d, "id"), id);
      DeviceProps p;
      int64_t sms = 0, major = -1, minor = -1;
      if (integer(field(d, "numSms"), sms) || integer(field(d, "smCount"), sms))
        p.sm_count = int(std::clamp<int64_t>(sms, 0, 1 << 20));
      if (integer(field(d, "computeMajor"), major) && integer(field(d, "computeMinor"), minor) &&
          major >= 0 && minor >= 0 && major < 100 && minor < 100)
        p.compute_capability = std::to_string(major) + "." + std::to_string(minor);
      double mem = 0;
      if (num(field(d, "totalGlobalMem"), mem) && mem > 0) p.memory_gb = mem / double(1 << 30);
      gpu_of.emplace(id, devices.resolve(str(field(d, "name")), p));
    }
    if (!gpu_of.empty()) break;
  }

  return gpu_of;
}

// The launch configuration a kernel event's args carry (grid, block, registers, shared memory, stream).
void launch_config(const json& args, Kernel& k) {
  for (int d = 0; d < 2; ++d) {
    const json* v = field(args, d == 0 ? "grid" : "block");
    if (v && v->is_array() && v->size() == 3) {
      for (size_t j = 0; j < 3; ++j) {
        int64_t x = 0;
        if (integer(&(*v)[j], x) && x >= 0) (d == 0 ? k.grid : k.block)[j] = x;
      }
    }
  }
  int64_t x = 0;
  if (integer(field(args, "registers per thread"), x) && x >= 0) k.registers = x;
  if (integer(field(args, "shared memory"), x) && x >= 0) k.shared_bytes = x;
  if (integer(field(args, "stream"), x) && x >= 0) k.stream = x;
}

// What one pass over the events finds: GPU work (the rows it will become, in file order), launches,
// CPU ops and annotation ranges.
struct PendingGpuEvent {
  Kernel k;  // name, times, launch configuration, copy bytes
  Kind kind = Kind::kernel;
  int64_t correlation = -1, external_id = -1, device = 0;
  bool has_correlation = false, has_device = false;
};

struct TraceIndex {
  std::vector<PendingGpuEvent> gpu_events;
  std::unordered_map<int64_t, Launch> launches;  // correlation -> runtime call
  std::unordered_map<int64_t, OpInfo> ops;       // External id -> what the CPU op says
  std::vector<std::pair<std::string, Range>> cpu_ranges, gpu_ranges;
};

// A GPU event's own fields, checked: the row it becomes before the step, the device and the launch
// are known.
PendingGpuEvent pending_of(const json& e, Kind kind, size_t i, const std::string& file) {
  auto where = [&] { return file + ": traceEvents[" + std::to_string(i) + "]"; };
  PendingGpuEvent p;
  p.kind = kind;
  Kernel& k = p.k;
  const json* name = field(e, "name");
  if (!name || !name->is_string() || name->get_ref<const std::string&>().empty())
    throw InputError(where() + ": 'name' is missing or not a string");
  k.name = name->get<std::string>();
  double ts = 0, dur = 0;
  if (!num(field(e, "ts"), ts)) throw InputError(where() + " ('" + k.name + "'): 'ts' is missing or not a number");
  if (!num(field(e, "dur"), dur)) throw InputError(where() + " ('" + k.name + "'): 'dur' is missing or not a number");
  if (dur < 0) throw InputError(where() + " ('" + k.name + "'): negative 'dur'");
  k.start_us = ts;
  k.duration_us = dur;
  const json* ap = field(e, "args");
  if (!ap || !ap->is_object()) return p;
  const json& args = *ap;
  p.has_correlation = integer(field(args, "correlation"), p.correlation);
  integer(field(args, "External id"), p.external_id);
  p.has_device = integer(field(args, "device"), p.device);
  launch_config(args, k);
  double b = 0;
  if (kind != Kind::kernel && num(field(args, "bytes"), b) && b >= 0) k.bytes = b;
  return p;
}

// One event of traceEvents (the i-th) into the index.
void index_event(const json& e, size_t i, const std::string& file, TraceIndex& t) {
  if (!e.is_object()) throw InputError(file + ": traceEvents[" + std::to_string(i) + "]: not an object");
  if (str(field(e, "ph")) != "X") return;
  Kind kind = kind_of(str(field(e, "cat")));
  if (kind == Kind::none) return;
  const std::string name = str(field(e, "name"));
  if (kind == Kind::cpu_op && name.starts_with("ProfilerStep#")) kind = Kind::annotation;
  const json* args = field(e, "args");
  double ts = 0, dur = 0;
  const bool timed = num(field(e, "ts"), ts) && num(field(e, "dur"), dur);
  switch (kind) {
    case Kind::kernel:
    case Kind::memcpy:
    case Kind::memset:
      t.gpu_events.push_back(pending_of(e, kind, i, file));
      break;
    case Kind::runtime: {
      int64_t corr = 0, ext = -1;
      if (args && integer(field(*args, "correlation"), corr) && timed) {
        integer(field(*args, "External id"), ext);
        t.launches[corr] = Launch{ts, ext};
      }
      break;
    }
    case Kind::cpu_op: {
      int64_t ext = 0;
      if (args && integer(field(*args, "External id"), ext)) {
        OpInfo info = op_info(name, *args);
        if (info.dtype || info.has_shape()) t.ops[ext] = info;
      }
      break;
    }
    case Kind::annotation:
      if (timed) t.cpu_ranges.push_back({name, Range{ts, ts + dur}});
      break;
    case Kind::gpu_annotation:
      if (timed) t.gpu_ranges.push_back({name, Range{ts, ts + dur}});
      break;
    case Kind::none: break;
  }
}

// The trace as the parser streams it (nlohmann's SAX interface): each element of traceEvents is built
// as a small JSON value, indexed and dropped, and the device properties are kept; everything else is
// skipped. Memory follows the GPU events the trace holds, not the size of its text (a DOM of the
// whole trace took 8.5x the file).
class TraceStream : public nlohmann::json_sax<json> {
 public:
  TraceStream(const std::string& file, TraceIndex& index) : file_(file), index_(index) {}

  json properties = json::object();  // deviceProperties / computeProperties, as the trace has them
  bool events_found() const { return events_found_; }

  bool null() override { return scalar(json(nullptr)); }
  bool boolean(bool v) override { return scalar(json(v)); }
  bool number_integer(number_integer_t v) override { return scalar(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(json(v)); }
  bool string(string_t& v) override { return scalar(json(std::move(v))); }
  bool binary(binary_t&) override { return scalar(json()); }

  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    if (!capture_.empty()) {
      slot_ = &(*capture_.back())[k];
    } else if (depth_ == 1 && !root_array_) {
      key_ = k;
    }
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    throw json_input_error(file_, ex);
  }

 private:
  // Where a value that starts now goes: into the value being captured, or it starts a capture (an
  // event, the device properties), or nowhere.
  bool scalar(json&& v) {
    if (!capture_.empty()) {
      place(std::move(v));
      return true;
    }
    if (depth_ == 0) throw InputError(file_ + ": not a Chrome / PyTorch profiler trace (expected a JSON object)");
    if (in_events()) throw InputError(file_ + ": traceEvents[" + std::to_string(event_index_++) + "]: not an object");
    if (depth_ == 1 && key_ == "traceEvents") throw InputError(file_ + ": 'traceEvents' is not an array");
    return true;
  }

  bool open(json&& container) {
    const bool object = container.is_object();
    if (!capture_.empty()) {
      capture_.push_back(place(std::move(container)));
    } else if (depth_ == 0) {
      if (!object) root_array_ = true, events_found_ = events_open_ = true, events_depth_ = 1;
    } else if (in_events()) {
      if (!object) throw InputError(file_ + ": traceEvents[" + std::to_string(event_index_) + "]: not an object");
      event_ = std::move(container);
      capture_.push_back(&event_);
      capturing_event_ = true;
    } else if (depth_ == 1 && key_ == "traceEvents") {
      if (object) throw InputError(file_ + ": 'traceEvents' is not an array");
      events_found_ = events_open_ = true, events_depth_ = 2;
    } else if (depth_ == 1 && (key_ == "deviceProperties" || key_ == "computeProperties")) {
      json& slot = properties[key_];
      slot = std::move(container);
      capture_.push_back(&slot);
      capturing_event_ = false;
    }
    ++depth_;
    return true;
  }

  bool close() {
    --depth_;
    if (capture_.empty()) {
      if (events_open_ && depth_ == events_depth_ - 1) events_open_ = false;  // traceEvents ends
      return true;
    }
    capture_.pop_back();
    if (capture_.empty() && capturing_event_) {
      index_event(event_, event_index_++, file_, index_);
      event_ = json();
    }
    return true;
  }

  // The value goes into the innermost captured container; returns where it landed.
  json* place(json&& v) {
    json& parent = *capture_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }

  // Inside the traceEvents array itself (not in an array of the same depth after it).
  bool in_events() const { return events_open_ && depth_ == events_depth_; }

  const std::string& file_;
  TraceIndex& index_;
  int depth_ = 0, events_depth_ = -1;
  bool root_array_ = false, events_found_ = false, events_open_ = false, capturing_event_ = false;
  std::string key_;
  std::vector<json*> capture_;
  json* slot_ = nullptr;
  json event_;
  size_t event_index_ = 0;
};

// The step the options select, as a CPU range (exact by launch) or else a GPU range.
struct StepRange {
  std::optional<Range> cpu, gpu;
};

StepRange select_step(TraceIndex& t, const std::string& file, const ImportOptions& opt) {
  auto& cpu_ranges = t.cpu_ranges;
  auto& gpu_ranges = t.gpu_ranges;
  std::optional<Range> cpu_sel, gpu_sel;
  if (!opt.step.nvtx.empty())
    throw InputError(file + ": option '--nvtx' applies to nsys-sqlite; use --profiler-step or "
                     "--annotation for PyTorch profiler traces");
  if (opt.step.profiler_step >= 0 || !opt.step.annotation.empty()) {
    const std::string want = opt.step.profiler_step >= 0
                                 ? "ProfilerStep#" + std::to_string(opt.step.profiler_step)
                                 : opt.step.annotation;
    const int instance = opt.step.profiler_step >= 0 ? 1 : opt.step.instance;
    auto pick = [&](std::vector<std::pair<std::string, Range>>& rs) -> std::optional<Range> {
      std::stable_sort(rs.begin(), rs.end(),
                       [](const auto& a, const auto& b) { return a.second.begin < b.second.begin; });
      int seen = 0;
      for (const auto& [n, r] : rs)
        if (n == want && ++seen == instance) return r;
      return std::nullopt;
    };
    cpu_sel = pick(cpu_ranges);
    if (!cpu_sel) gpu_sel = pick(gpu_ranges);
    if (!cpu_sel && !gpu_sel) {
      std::vector<std::string> names;
      for (const auto* rs : {&cpu_ranges, &gpu_ranges})
        for (const auto& [n, r] : *rs)
          if (std::find(names.begin(), names.end(), n) == names.end() && names.size() < 8) names.push_back(n);
      std::string msg = file + ": no range '" + want + "'" +
                        (instance > 1 ? " (instance " + std::to_string(instance) + ")" : "") +
                        " among the trace's user_annotation / gpu_user_annotation events";
      if (names.empty()) {
        msg += "; the trace has no annotation ranges";
      } else {
        msg += "; ranges in the trace include: ";
        for (size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : "") + names[i];
      }
      throw InputError(msg);
    }
  }

  return {cpu_sel, gpu_sel};
}


// The kernel list row of a GPU event; nullopt when outside the step.
std::optional<Kernel> kernel_of(PendingGpuEvent& p, const TraceIndex& t, const StepRange& step,
                                const std::unordered_map<int64_t, std::string>& gpu_of,
                                const DeviceResolver& devices, const Classifier& cls) {
  const Launch* launch = nullptr;
  if (p.has_correlation)
    if (auto it = t.launches.find(p.correlation); it != t.launches.end()) launch = &it->second;
  if (step.cpu) {
    if (!step.cpu->contains(launch ? launch->ts : p.k.start_us)) return std::nullopt;
  } else if (step.gpu && !step.gpu->contains(p.k.start_us)) {
    return std::nullopt;
  }
  Kernel k = std::move(p.k);
  k.cls = p.kind == Kind::memcpy ? KernelClass::memcpy : p.kind == Kind::memset ? KernelClass::memset
                                                                                 : cls.classify(k.name);
  if (devices.overridden()) {
    k.gpu = devices.override_name();
  } else if (auto it = gpu_of.find(p.has_device ? p.device : 0); it != gpu_of.end()) {
    k.gpu = it->second;
  } else if (gpu_of.size() == 1) {
    k.gpu = gpu_of.begin()->second;
  }
  std::optional<DType> named;
  if (p.kind == Kind::kernel && (named = dtype_from_kernel_name(k.name))) k.dtype = *named;
  // The CPU op that launched it: via the runtime call's External id, else the kernel's own.
  const int64_t ext = launch && launch->external_id >= 0 ? launch->external_id : p.external_id;
  if (p.kind == Kind::kernel && ext >= 0) {
    if (auto it = t.ops.find(ext); it != t.ops.end()) {
      const OpInfo& op = it->second;
      // The op's operand type wins, except that fp32 operands run as tf32 when the kernel's
      // name says so (TF32 tensor cores, torch.backends.cuda.matmul.allow_tf32).
      if (op.dtype && !(*op.dtype == DType::fp32 && named == DType::tf32)) k.dtype = *op.dtype;
      // Only the GEMM / conv kernels of the op do its GEMM; cuDNN layout transforms, split-K
      // reductions and bias adds launched by the same op keep no shape.
      if (op.has_shape() && (k.cls == KernelClass::gemm || k.cls == KernelClass::conv)) {
        k.batch = op.batch, k.m = op.m, k.n = op.n, k.k = op.k;
        k.derive_from_shape();
      }
    }
  }
  return k;
}

// Streams the trace from `in` (a string or a stream) into the sink.
template <class Input>
void import_stream(Input&& in, const std::string& file, const ImportOptions& opt, KernelSink& sink) {
  TraceIndex t;
  TraceStream stream(file, t);
  try {
    json::sax_parse(std::forward<Input>(in), &stream);
  } catch (const nlohmann::json::exception& e) {  // what the SAX interface does not report itself
    throw json_input_error(file, e);
  }
  if (!stream.events_found()) throw InputError(file + ": no 'traceEvents' (not a Chrome / PyTorch profiler trace)");
  DeviceResolver devices(opt, file);
  const std::unordered_map<int64_t, std::string> gpu_of = gpu_names(stream.properties, devices);
  // Step selection. CPU-side range first: a kernel belongs to the step whose CPU range contains
  // the runtime call that launched it (by correlation), which is exact even when GPU work of
  // consecutive steps overlaps in time. Without a CPU range, the gpu_user_annotation projection
  // of that range on the GPU timeline is used (kernel start inside it).
  const StepRange step = select_step(t, file, opt);
  const Classifier& cls = classifier(opt);
  for (PendingGpuEvent& p : t.gpu_events)
    if (std::optional<Kernel> k = kernel_of(p, t, step, gpu_of, devices, cls)) sink.add(std::move(*k));
}

// A gzip or plain file as a stream: gzread passes plain files through unchanged.
class GzStreambuf : public std::streambuf {
 public:
  explicit GzStreambuf(const std::string& path) : path_(path), f_(gzopen(path.c_str(), "rb")) {
    if (!f_) throw InputError(path + ": cannot open");
    gzbuffer(f_, 1 << 18);
  }
  ~GzStreambuf() override { gzclose(f_); }
  GzStreambuf(const GzStreambuf&) = delete;
  GzStreambuf& operator=(const GzStreambuf&) = delete;
  uint64_t bytes() const { return bytes_; }

 protected:
  int_type underflow() override {
    const int n = gzread(f_, buf_, sizeof buf_);
    if (n < 0) {
      int err = 0;
      throw InputError(gz_message(path_, gzerror(f_, &err)));
    }
    if (n == 0) {
      int err = 0;
      const char* msg = gzerror(f_, &err);
      if (err != Z_OK && err != Z_STREAM_END) throw InputError(gz_message(path_, msg));
      return traits_type::eof();
    }
    bytes_ += uint64_t(n);
    if (bytes_ > kMaxTraceBytes) throw InputError(path_ + ": decompressed trace exceeds 16 GiB");
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(buf_[0]);
  }

 private:
  std::string path_;
  gzFile f_;
  char buf_[1 << 18];
  uint64_t bytes_ = 0;
};

}  // namespace

void read_kineto_json(const std::string& path, const ImportOptions& opt, KernelSink& sink) {
  auto buf = std::make_unique<GzStreambuf>(path);
  std::istream in(buf.get());
  in.exceptions(std::ios::badbit);  // the stream buffer's InputError (a corrupt gzip) reaches the caller
  // An empty (or blank) file says so rather than failing as JSON.
  if ((in >> std::ws).peek() == std::char_traits<char>::eof())
    throw InputError(path + ": empty file (expected a PyTorch profiler JSON trace)");
  import_stream(in, path, opt, sink);
}

void parse_kineto_json(const std::string& bytes, const std::string& name, const ImportOptions& opt,
                       KernelSink& sink) {
  if (bytes.size() >= 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b) {
    import_stream(gunzip(bytes, name), name, opt, sink);
    return;
  }
  if (bytes.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError(name + ": empty file (expected a PyTorch profiler JSON trace)");
  import_stream(bytes, name, opt, sink);
}

}  // namespace kcast
