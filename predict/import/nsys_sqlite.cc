// Reader of the Nsight Systems SQLite export (`nsys export --type sqlite`), through libsqlite3,
// opened read-only. Kernels (CUPTI_ACTIVITY_KIND_KERNEL), copies with their bytes (_MEMCPY) and
// sets (_MEMSET); names are ids into StringIds; the device comes from TARGET_INFO_GPU. Columns come
// and go across nsys versions (greenContextId, graphId, mangledName, ...): every column is selected
// by name after PRAGMA table_info, and an absent one reads as NULL. Rows are ordered by start.
// --nvtx keeps the kernels that start inside one NVTX_EVENTS range of that name.
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "model/error.h"
#include "predict/import/import.h"
#include "predict/import/import_util.h"

namespace kcast {

namespace {

using namespace import_detail;

class Db {
 public:
  Db(sqlite3* db, std::string file) : db_(db), file_(std::move(file)) {
    // Corrupt exports are untrusted input: refuse writes to the schema and odd pragmas.
    sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  [[noreturn]] void fail(const std::string& where) const {
    throw InputError(file_ + ": " + where + ": " + sqlite3_errmsg(db_));
  }
  sqlite3* get() const { return db_; }
  const std::string& file() const { return file_; }

 private:
  sqlite3* db_;
  std::string file_;
};

class Stmt {
 public:
  Stmt(const Db& db, const std::string& sql, const std::string& where) : db_(db), where_(where) {
    if (sqlite3_prepare_v2(db.get(), sql.c_str(), int(sql.size()), &s_, nullptr) != SQLITE_OK) db.fail(where);
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  bool step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    db_.fail(where_);
  }
  bool null(int i) const { return sqlite3_column_type(s_, i) == SQLITE_NULL; }
  int64_t i64(int i) const { return sqlite3_column_int64(s_, i); }
  double f64(int i) const { return sqlite3_column_double(s_, i); }
  std::string text(int i) const {
    const unsigned char* t = sqlite3_column_text(s_, i);
    return t ? std::string(reinterpret_cast<const char*>(t), size_t(sqlite3_column_bytes(s_, i))) : std::string();
  }
  void bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  void bind(int i, const std::string& v) { sqlite3_bind_text(s_, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT); }

 private:
  const Db& db_;
  std::string where_;
  sqlite3_stmt* s_ = nullptr;
};

std::set<std::string> tables(const Db& db) {
  std::set<std::string> out;
  Stmt s(db, "SELECT name FROM sqlite_master WHERE type IN ('table','view')", "reading the schema");
  while (s.step()) out.insert(s.text(0));
  return out;
}

std::set<std::string> columns(const Db& db, const std::string& table) {
  std::set<std::string> out;
  Stmt s(db, "PRAGMA table_info(\"" + table + "\")", "table " + table);
  while (s.step()) out.insert(s.text(1));
  return out;
}

// `alias."col"` when the table has it, else NULL (columns that come and go across nsys versions).
std::string col(const std::set<std::string>& cols, const std::string& name, const char* alias = "t") {
  return cols.count(name) ? std::string(alias) + ".\"" + name + "\"" : std::string("NULL");
}

// A name column: an id into StringIds in every current export; plain text where StringIds is absent.
std::string name_expr(const std::set<std::string>& cols, bool string_ids, std::initializer_list<const char*> names) {
  std::string e = "COALESCE(";
  bool any = false;
  for (const char* n : names) {
    if (!cols.count(n)) continue;
    if (any) e += ", ";
    e += string_ids ? "(SELECT value FROM StringIds WHERE id = t.\"" + std::string(n) + "\")"
                    : "CAST(t.\"" + std::string(n) + "\" AS TEXT)";
    any = true;
  }
  return any ? e + ", NULL)" : "NULL";
}

struct Window {
  bool on = false;
  int64_t begin = 0, end = 0;
};

Window nvtx_window(const Db& db, const std::set<std::string>& tabs, const ImportOptions& opt) {
  Window w;
  if (opt.step.nvtx.empty()) {
    if (opt.step.any())
      throw InputError(db.file() + ": options '--profiler-step' / '--annotation' apply to PyTorch "
                       "profiler (kineto-json) traces; use --nvtx NAME for an nsys export");
    return w;
  }
  if (!tabs.count("NVTX_EVENTS"))
    throw InputError(db.file() + ": option '--nvtx': the export has no NVTX_EVENTS table (profile "
                     "with -t cuda,nvtx)");
  const auto cols = columns(db, "NVTX_EVENTS");
  if (!cols.count("start") || !cols.count("end"))
    throw InputError(db.file() + ": table NVTX_EVENTS: missing column 'start' or 'end'");
  // The range name: inline `text`, or `textId` into StringIds (registered strings).
  const std::string name = "COALESCE(" + col(cols, "text") + ", " +
                           (cols.count("textId") && tabs.count("StringIds")
                                ? "(SELECT value FROM StringIds WHERE id = t.textId)"
                                : std::string("NULL")) +
                           ")";
  const std::string ranges = "FROM NVTX_EVENTS t WHERE t.\"end\" IS NOT NULL AND t.\"end\" >= t.start";
  {
    Stmt s(db, "SELECT t.start, t.\"end\" " + ranges + " AND " + name + " = ?1 ORDER BY t.start",
           "table NVTX_EVENTS");
    s.bind(1, opt.step.nvtx);
    int seen = 0;
    while (s.step()) {
      if (++seen == opt.step.instance) {
        w.on = true, w.begin = s.i64(0), w.end = s.i64(1);
        return w;
      }
    }
  }
  std::string msg = db.file() + ": option '--nvtx': no NVTX range '" + opt.step.nvtx + "'" +
                    (opt.step.instance > 1 ? " (instance " + std::to_string(opt.step.instance) + ")" : "");
  Stmt s(db, "SELECT DISTINCT " + name + " " + ranges + " LIMIT 9", "table NVTX_EVENTS");
  std::vector<std::string> names;
  while (s.step())
    if (!s.null(0)) names.push_back(s.text(0));
  if (names.empty()) {
    msg += "; the export has no NVTX ranges";
  } else {
    msg += "; ranges in the export include: ";
    for (size_t i = 0; i < names.size() && i < 8; ++i) msg += (i ? ", " : "") + names[i];
  }
  throw InputError(msg);
}

// deviceId -> canonical GPU name, from TARGET_INFO_GPU (by name, else by SMs / compute capability
// / memory, with a warning from the resolver).
struct Devices {
  std::map<int64_t, std::string> by_id, by_cu_device;
  std::string only;  // the one name when every GPU of the export resolves to it
  const std::string& of(int64_t device) const {
    if (auto it = by_id.find(device); it != by_id.end()) return it->second;
    if (auto it = by_cu_device.find(device); it != by_cu_device.end()) return it->second;
    return only;
  }
};

Devices devices(const Db& db, const std::set<std::string>& tabs, DeviceResolver& resolver) {
  Devices d;
  if (resolver.overridden()) {
    d.only = resolver.override_name();
    return d;
  }
  if (!tabs.count("TARGET_INFO_GPU")) return d;
  const auto cols = columns(db, "TARGET_INFO_GPU");
  Stmt s(db, "SELECT " + col(cols, "id") + ", " + col(cols, "name") + ", " + col(cols, "smCount") + ", " +
                 col(cols, "totalMemory") + ", " + col(cols, "computeMajor") + ", " +
                 col(cols, "computeMinor") + ", " + col(cols, "cuDevice") + " FROM TARGET_INFO_GPU t",
         "table TARGET_INFO_GPU");
  std::set<std::string> names;
  while (s.step()) {
    DeviceProps p;
    if (!s.null(2)) p.sm_count = int(std::clamp<int64_t>(s.i64(2), 0, 1 << 20));
    if (!s.null(3) && s.f64(3) > 0) p.memory_gb = s.f64(3) / double(1 << 30);
    if (!s.null(4) && !s.null(5) && s.i64(4) >= 0 && s.i64(4) < 100 && s.i64(5) >= 0 && s.i64(5) < 100)
      p.compute_capability = std::to_string(s.i64(4)) + "." + std::to_string(s.i64(5));
    const std::string& g = resolver.resolve(s.text(1), p);
    if (!s.null(0)) d.by_id[s.i64(0)] = g;
    if (!s.null(6)) d.by_cu_device[s.i64(6)] = g;
    names.insert(g);
  }
  if (names.size() == 1) d.only = *names.begin();
  return d;
}

// Columns 0-3 of every activity query: start, end, deviceId, streamId (ns; CUPTI ids).
void timing_columns(const Stmt& s, Kernel& k, const std::string& file, const std::string& table, size_t row,
                    const Devices& dev) {
  // Columns 0-3: start, end, deviceId, streamId (ns; CUPTI ids).
  if (s.null(0) || s.null(1))
    throw InputError(file + ": table " + table + ", row " + std::to_string(row) + ": no start/end");
  const int64_t start = s.i64(0), end = s.i64(1);
  if (end < start)
    throw InputError(file + ": table " + table + ", row " + std::to_string(row) + ": end before start");
  k.start_us = double(start) / 1e3;
  k.duration_us = (double(end) - double(start)) / 1e3;  // in double: no overflow on odd values
  if (!s.null(2)) k.gpu = dev.of(s.i64(2));
  else k.gpu = dev.only;
  if (!s.null(3) && s.i64(3) >= 0) k.stream = s.i64(3);
}

// Launch fields, clamped so that sums of them cannot overflow.
int64_t nonneg(const Stmt& s, int i) { return s.null(i) ? int64_t(0) : std::clamp<int64_t>(s.i64(i), 0, int64_t(1) << 40); }

// What every activity query shares: the file, its devices, the NVTX window's WHERE clause.
struct Activity {
  const Db& db;
  const std::string& file;
  const Devices& dev;
  const Window& win;
  const std::string& where;
};

// CUPTI_ACTIVITY_KIND_KERNEL: the kernels, classified by name, with their launch configuration.
void read_kernels(const Activity& a, bool string_ids, const Classifier& cls, KernelSink& sink) {
  const Db& db = a.db;
  const std::string& file = a.file;
  const Devices& dev = a.dev;
  const Window& win = a.win;
  const std::string& where = a.where;
  const std::string kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
  const auto c = columns(db, kKernel);
  for (const char* need : {"start", "end"})
    if (!c.count(need)) throw InputError(file + ": table " + kKernel + ": missing column '" + need + "'");
  Stmt s(db,
         "SELECT t.start, t.\"end\", " + col(c, "deviceId") + ", " + col(c, "streamId") + ", " +
             name_expr(c, string_ids, {"demangledName", "shortName", "mangledName"}) + ", " +
             col(c, "gridX") + ", " + col(c, "gridY") + ", " + col(c, "gridZ") + ", " + col(c, "blockX") +
             ", " + col(c, "blockY") + ", " + col(c, "blockZ") + ", " + col(c, "registersPerThread") +
             ", " + col(c, "staticSharedMemory") + ", " + col(c, "dynamicSharedMemory") + " FROM " +
             kKernel + " t" + where + " ORDER BY t.start",
         "table " + kKernel);
  if (win.on) s.bind(1, win.begin), s.bind(2, win.end);
  std::map<std::string, std::pair<KernelClass, std::optional<DType>>> names;
  for (size_t row = 1; s.step(); ++row) {
    Kernel k;
    timing_columns(s, k, file, kKernel, row, dev);
    k.name = s.text(4);
    if (k.name.empty())
      throw InputError(file + ": table " + kKernel + ", row " + std::to_string(row) +
                       ": kernel name not found (demangledName/shortName not in StringIds)");
    auto it = names.find(k.name);
    if (it == names.end())
      it = names.emplace(k.name, std::pair(cls.classify(k.name), dtype_from_kernel_name(k.name))).first;
    k.cls = it->second.first;
    if (it->second.second) k.dtype = *it->second.second;
    for (int i = 0; i < 3; ++i) k.grid[i] = nonneg(s, 5 + i), k.block[i] = nonneg(s, 8 + i);
    k.registers = nonneg(s, 11);
    k.shared_bytes = nonneg(s, 12) + nonneg(s, 13);
    sink.add(std::move(k));
  }
}

// CUPTI_ACTIVITY_KIND_MEMCPY / MEMSET: copies and fills, with their bytes.
void read_copies(const Activity& a, const std::set<std::string>& tabs, KernelSink& sink) {
  const Db& db = a.db;
  const std::string& file = a.file;
  const Devices& dev = a.dev;
  const Window& win = a.win;
  const std::string& where = a.where;
  for (const std::string table : {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
    if (!tabs.count(table)) continue;
    const auto c = columns(db, table);
    if (!c.count("start") || !c.count("end")) continue;
    const bool copy = table.ends_with("MEMCPY");
    Stmt s(db,
           "SELECT t.start, t.\"end\", " + col(c, "deviceId") + ", " + col(c, "streamId") + ", " +
               col(c, "bytes") + ", " + (copy ? col(c, "copyKind") : std::string("NULL")) + " FROM " + table +
               " t" + where + " ORDER BY t.start",
           "table " + table);
    if (win.on) s.bind(1, win.begin), s.bind(2, win.end);
    for (size_t row = 1; s.step(); ++row) {
      Kernel k;
      timing_columns(s, k, file, table, row, dev);
      k.cls = copy ? KernelClass::memcpy : KernelClass::memset;
      k.name = copy ? copy_kind_name(s.null(5) ? 0 : s.i64(5)) : "[CUDA memset]";
      if (!s.null(4) && s.f64(4) >= 0) k.bytes = s.f64(4);
      sink.add(std::move(k));
    }
  }
}

void read_db(const Db& db, const ImportOptions& opt, KernelSink& sink) {
  const std::string& file = db.file();
  const auto tabs = tables(db);
  const std::string kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
  if (!tabs.count(kKernel))
    throw InputError(file + ": table " + kKernel + " not found (no CUDA kernels in this export; "
                     "was the profile taken with -t cuda?)");
  const Window win = nvtx_window(db, tabs, opt);
  DeviceResolver resolver(opt, file);
  const Devices dev = devices(db, tabs, resolver);
  const std::string where = win.on ? " WHERE t.start >= ?1 AND t.start <= ?2" : "";
  const Activity a{db, file, dev, win, where};
  read_kernels(a, tabs.count("StringIds") > 0, classifier(opt), sink);
  read_copies(a, tabs, sink);
}

constexpr char kMagic[] = "SQLite format 3";  // followed by '\0': 16 bytes

bool has_magic(const char* p, size_t n) { return n >= 16 && std::memcmp(p, kMagic, 16) == 0; }

[[noreturn]] void not_sqlite(const std::string& file) {
  throw InputError(file + ": not an SQLite database (expected an `nsys export --type sqlite` file)");
}

}  // namespace

void read_nsys_sqlite(const std::string& path, const ImportOptions& opt, KernelSink& sink) {
  {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError(path + ": cannot open");
    char head[16] = {};
    f.read(head, sizeof head);
    if (f.gcount() == 0) throw InputError(path + ": empty file (expected an nsys SQLite export)");
    if (!has_magic(head, size_t(f.gcount()))) not_sqlite(path);
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    throw InputError(path + ": cannot open: " + msg);
  }
  Db db(raw, path);
  read_db(db, opt, sink);
}

void parse_nsys_sqlite(const std::string& bytes, const std::string& name, const ImportOptions& opt,
                       KernelSink& sink) {
  if (bytes.empty()) throw InputError(name + ": empty file (expected an nsys SQLite export)");
  if (!has_magic(bytes.data(), bytes.size())) not_sqlite(name);
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(raw);
    throw InputError(name + ": cannot open an in-memory database");
  }
  Db db(raw, name);
  auto* buf = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
  if (!buf) throw InputError(name + ": out of memory");
  std::memcpy(buf, bytes.data(), bytes.size());
  if (sqlite3_deserialize(raw, "main", buf, sqlite3_int64(bytes.size()), sqlite3_int64(bytes.size()),
                          SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) != SQLITE_OK)
    db.fail("loading the database");
  read_db(db, opt, sink);
}

}  // namespace kcast
