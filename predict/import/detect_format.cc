// `--from auto`: which reader a file needs, from its first bytes (magic numbers, JSON keys, CSV
// header names) and, only where the content is not conclusive, its extension.
#include <cstring>
#include <fstream>

#include "model/ascii_lower.h"
#include "model/error.h"
#include "predict/import/import.h"

namespace kcast {

namespace {

constexpr size_t kProbeBytes = 64 * 1024;

bool has(std::string_view line, std::string_view what) { return line.find(what) != std::string_view::npos; }

// A CSV header cell equal to `name`, quoted or not.
bool has_cell(std::string_view line, std::string_view name) {
  size_t pos = 0;
  while (pos <= line.size()) {
    size_t end = line.find(',', pos);
    if (end == std::string_view::npos) end = line.size();
    std::string_view cell = line.substr(pos, end - pos);
    while (!cell.empty() && (cell.front() == ' ' || cell.front() == '"')) cell.remove_prefix(1);
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '"' || cell.back() == '\r'))
      cell.remove_suffix(1);
    if (cell == name) return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace

std::string_view to_string(TraceFormat f) {
  switch (f) {
    case TraceFormat::automatic: return "auto";
    case TraceFormat::nsys_sqlite: return "nsys-sqlite";
    case TraceFormat::nsys_csv: return "nsys-csv";
    case TraceFormat::ncu_csv: return "ncu-csv";
    case TraceFormat::kineto_json: return "kineto-json";
    case TraceFormat::kcast_csv: return "kcast-csv";
  }
  return "?";
}

std::optional<TraceFormat> parse_trace_format(std::string_view s) {
  for (TraceFormat f : {TraceFormat::automatic, TraceFormat::nsys_sqlite, TraceFormat::nsys_csv,
                        TraceFormat::ncu_csv, TraceFormat::kineto_json, TraceFormat::kcast_csv})
    if (to_string(f) == s) return f;
  return std::nullopt;
}

TraceFormat detect_format_bytes(std::string_view head, const std::string& name) {
  if (head.size() >= 16 && std::memcmp(head.data(), "SQLite format 3\0", 16) == 0)
    return TraceFormat::nsys_sqlite;
  if (head.size() >= 2 && uint8_t(head[0]) == 0x1f && uint8_t(head[1]) == 0x8b)
    return TraceFormat::kineto_json;
  size_t first = head.find_first_not_of(" \t\r\n");
  if (head.substr(0, 3) == "\xEF\xBB\xBF") first = head.find_first_not_of(" \t\r\n", 3);
  if (first == std::string_view::npos) {
    if (ends_with_ci(name, ".json") || ends_with_ci(name, ".json.gz") || ends_with_ci(name, ".sqlite"))
      throw InputError(name + ": empty file");
    throw InputError(name + ": empty file (no trace to import)");
  }
  if (head[first] == '{' || head[first] == '[') {
    if (has(head, "\"traceEvents\"") || (head[first] == '[' && has(head, "\"ph\"")))
      return TraceFormat::kineto_json;
  } else {
    // CSV: look at the first lines (a captured nsys stdout has banner lines before the header).
    size_t pos = first;
    bool first_line = true;
    for (int n = 0; n < 200 && pos < head.size(); ++n) {
      size_t end = head.find('\n', pos);
      if (end == std::string_view::npos) end = head.size();
      std::string_view line = head.substr(pos, end - pos);
      pos = end + 1;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      if (has(line, "Kernel Name") && (has(line, "Metric Name") || has_cell(line, "ID")))
        return TraceFormat::ncu_csv;
      if (has(line, ",") && has(line, "Name") && (has(line, "Start") || has(line, "Duration")))
        return TraceFormat::nsys_csv;
      if (first_line && has_cell(line, "name")) return TraceFormat::kcast_csv;
      first_line = false;
    }
  }
  // Content says nothing conclusive: let the extension pick the reader, whose error is specific.
  if (ends_with_ci(name, ".json") || ends_with_ci(name, ".json.gz") || ends_with_ci(name, ".pt.trace.json"))
    return TraceFormat::kineto_json;
  if (ends_with_ci(name, ".sqlite") || ends_with_ci(name, ".db")) return TraceFormat::nsys_sqlite;
  throw InputError(name + ": unrecognized trace format (expected an nsys SQLite export, nsys "
                   "cuda_gpu_trace CSV, ncu CSV, PyTorch profiler JSON or a kcast kernel list); "
                   "pass --from FORMAT");
}

TraceFormat detect_format(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path + ": cannot open");
  std::string head(kProbeBytes, '\0');
  f.read(head.data(), std::streamsize(head.size()));
  head.resize(size_t(f.gcount()));
  return detect_format_bytes(head, path);
}

}  // namespace kcast
