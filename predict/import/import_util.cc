// Shared helpers of the trace readers (see import_util.h).
#include "predict/import/import_util.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>

#include "io/console.h"
#include "io/classifier_rules.h"
#include "io/csv_source.h"
#include "io/gpu_database_csv.h"
#include "model/error.h"

namespace kcast::import_detail {

const GpuDatabase& gpu_db(const ImportOptions& opt) {
  return opt.gpus ? *opt.gpus : default_gpu_database();
}

const Classifier& classifier(const ImportOptions& opt) {
  return opt.classifier ? *opt.classifier : default_classifier();
}

void warn(const ImportOptions& opt, const std::string& msg) {
  if (opt.warn)
    opt.warn(msg);
  else
    console_err() << "kcast: warning: " << msg << "\n";
}

DeviceResolver::DeviceResolver(const ImportOptions& opt, std::string file)
    : opt_(opt), file_(std::move(file)) {
  if (!opt.gpu.empty()) {
    try {
      override_ = gpu_db(opt).resolve(opt.gpu).name;
    } catch (const InputError& e) {
      throw InputError(std::string("option '--gpu': ") + e.what());
    }
  }
}

const std::string& DeviceResolver::resolve(const std::string& device, const DeviceProps& props) {
  if (!override_.empty()) return override_;
  if (device.empty() && props.sm_count <= 0) return empty_;
  std::lock_guard lock(mutex_);
  auto it = cache_.find(device);
  if (it != cache_.end()) return it->second;
  GpuResolution r = gpu_db(opt_).resolve(device, props);
  std::string name;
  if (r.gpu) {
    name = r.gpu->name;
    if (!r.warning.empty()) warn(opt_, file_ + ": " + r.warning);
  } else {
    std::string msg = file_ + ": device '" + device + "' is not in the GPU database";
    auto sug = gpu_db(opt_).suggestions(device);
    if (!sug.empty()) {
      msg += " (closest:";
      for (size_t i = 0; i < sug.size(); ++i) msg += (i ? ", " : " ") + sug[i];
      msg += ")";
    }
    warn(opt_, msg + "; the gpu column is left empty (use --gpu NAME)");
  }
  return cache_.emplace(device, std::move(name)).first->second;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return std::string(s);
}

unsigned find_header_line(const std::string& head, const std::string& name,
                          bool (*is_header)(std::string_view), const std::string& not_found) {
  if (head.find_first_not_of(" \t\r\n") == std::string::npos) throw InputError(name + ": empty file");
  constexpr unsigned kMaxPreambleLines = 10000;
  try {
    io::LineReader lines(name, std::make_unique<MemoryByteSource>(head));
    unsigned i = 0;
    while (char* line = lines.next_line()) {
      if (is_header(line)) return i;
      if (++i >= kMaxPreambleLines) break;
    }
  } catch (const io::error::base&) {
    // An over-long line in the head: not a report header either.
  }
  throw InputError(name + ": " + not_found);
}

std::string read_head(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path + ": cannot open");
  std::string head(kHeadBytes, '\0');
  f.read(head.data(), std::streamsize(head.size()));
  head.resize(size_t(f.gcount()));
  return head;
}

Num parse_num(std::string_view s, bool thousands) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  Num n;
  if (s.empty() || s == "n/a" || s == "N/A" || s == "-") return n;
  n.given = true;
  // Fast path for plain integers, most cells of a trace (times in ns, ids, launch dimensions).
  if (s.size() <= 18) {
    size_t i = s[0] == '-' ? 1 : 0;
    int64_t v = 0;
    bool digits = i < s.size();
    for (size_t j = i; j < s.size() && digits; ++j) {
      const unsigned d = unsigned(s[j] - '0');
      if (d > 9) digits = false;
      v = v * 10 + int64_t(d);
    }
    if (digits) {
      n.value = double(i ? -v : v);
      return n;
    }
  }
  std::string buf;
  if (thousands && s.find(',') != std::string_view::npos) {
    for (char c : s)
      if (c != ',') buf += c;
    s = buf;
  }
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n.value);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(n.value)) n.bad = true;
  return n;
}

double time_unit_to_us(std::string_view u) {
  if (u == "ns" || u == "nsecond" || u == "nsec") return 1e-3;
  if (u == "us" || u == "usecond" || u == "usec" || u == "\xC2\xB5s") return 1;
  if (u == "ms" || u == "msecond" || u == "msec") return 1e3;
  if (u == "s" || u == "second" || u == "sec") return 1e6;
  return 0;
}

double bytes_unit_scale(std::string_view u) {
  if (u == "B" || u == "byte" || u == "bytes") return 1;
  if (u == "KB" || u == "kB" || u == "Kbyte" || u == "kbyte") return 1e3;
  if (u == "MB" || u == "Mbyte") return 1e6;
  if (u == "GB" || u == "Gbyte") return 1e9;
  if (u == "TB" || u == "Tbyte") return 1e12;
  if (u == "KiB") return 1024.0;
  if (u == "MiB") return 1024.0 * 1024;
  if (u == "GiB") return 1024.0 * 1024 * 1024;
  return 0;
}

std::string canonical_copy_name(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> kOld[] = {
      {"[CUDA memcpy HtoD]", "[CUDA memcpy Host-to-Device]"},
      {"[CUDA memcpy DtoH]", "[CUDA memcpy Device-to-Host]"},
      {"[CUDA memcpy DtoD]", "[CUDA memcpy Device-to-Device]"},
      {"[CUDA memcpy HtoH]", "[CUDA memcpy Host-to-Host]"},
      {"[CUDA memcpy PtoP]", "[CUDA memcpy Peer-to-Peer]"},
      {"[CUDA memcpy HtoA]", "[CUDA memcpy Host-to-Array]"},
      {"[CUDA memcpy AtoH]", "[CUDA memcpy Array-to-Host]"},
      {"[CUDA memcpy AtoA]", "[CUDA memcpy Array-to-Array]"},
      {"[CUDA memcpy AtoD]", "[CUDA memcpy Array-to-Device]"},
      {"[CUDA memcpy DtoA]", "[CUDA memcpy Device-to-Array]"},
  };
  for (const auto& [o, n] : kOld)
    if (name == o) return std::string(n);
  return std::string(name);
}

std::string copy_kind_name(int64_t kind) {
  static const char* const kNames[] = {
      "Unknown",        "Host-to-Device",  "Device-to-Host",  "Host-to-Array",
      "Array-to-Host",  "Array-to-Array",  "Array-to-Device", "Device-to-Array",
      "Device-to-Device", "Host-to-Host",  "Peer-to-Peer"};
  if (kind < 0 || kind >= int64_t(std::size(kNames))) return "[CUDA memcpy Unknown]";
  return std::string("[CUDA memcpy ") + kNames[kind] + "]";
}

}  // namespace kcast::import_detail
