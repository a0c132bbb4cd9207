#include "io/kernel_list_csv.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <new>
#include <ostream>

#include "io/console.h"
#include "io/atomic_file.h"
#include "io/csv_quote.h"
#include "io/csv_chunks.h"
#include "io/csv_source.h"
#include "io/mapped_file.h"
#include "model/ascii_lower.h"
#include "model/attention_kernel.h"
#include "model/error.h"
#include "model/parallel_for.h"
#include "model/row_kernel.h"

namespace kcast {

const char* const kKernelListColumns[] = {
    "name",    "class",   "dtype",   "batch",     "m",         "n",         "k",        "flops",
    "bytes",   "grid_x",  "grid_y",  "grid_z",    "block_x",   "block_y",   "block_z",  "registers",
    "shared_bytes", "count", "duration_us", "gpu", "start_us", "stream", "context", "l2", "net_bytes"};
constexpr int kNumColumns = 25;

namespace {

using Reader = io::CSVReader<kNumColumns, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>>;

// The row's class, given or from its name, and what its name tells the model.
void classify(Kernel& k, const char* cell, const CellRef& ref, const KernelListOptions& opt) {
  if (cell && *cell) {
    auto cls = parse_kernel_class(cell);
    if (!cls) throw InputError(ref.where() + ": unknown class '" + cell + "'");
    k.cls = *cls;
    k.cls_given = true;
  } else {
    k.cls = opt.classifier ? opt.classifier->classify(k.name) : KernelClass::other;
  }
  if (k.cls == KernelClass::conv) k.conv_algo = conv_algo_of(k.name);
  if (k.cls == KernelClass::normalization || k.cls == KernelClass::softmax) k.row_read_once = reads_rows_once(k.name);
  if (k.cls == KernelClass::attention) k.mma_sync = runs_mma_sync(k.name);
  if (k.cls == KernelClass::memcpy) k.copy = copy_kind_of(k.name);
  k.access = thread_access_of(k.cls, k.name);
  // cuDNN launches cuBLAS SGEMMs for some convolutions (1x1, im2col, Winograd-nonfused): their names
  // record the tile too.
  if (k.cls == KernelClass::gemm || k.conv_algo == ConvAlgo::gemm) k.tile = sgemm_tile_of(k.name);
}

// The `gpu` cells, resolved against the database when the options give one; traces repeat one GPU,
// so the last resolution is kept.
class GpuCells {
 public:
  explicit GpuCells(const GpuDatabase* db) : db_(db) {}
  std::string name_of(const char* cell, const CellRef& ref) {
    if (!db_) return cell;
    if (last_in_ == cell) return last_out_;
    const GpuSpec* g = db_->find(cell);
    if (!g) {
      try {
        db_->resolve(cell);
      } catch (const InputError& e) {
        throw InputError(ref.where() + ": " + e.what());
      }
    }
    last_in_ = cell;
    return last_out_ = g->name;
  }

 private:
  const GpuDatabase* db_;
  std::string last_in_, last_out_;
};

// Columns of a row that are the row's own rather than the kernel's it launched (KernelTable::Row).
constexpr int kCountCol = 17, kDurationCol = 18, kStartCol = 20, kStreamCol = 21;
constexpr bool is_row_column(int col) {
  return col == kCountCol || col == kDurationCol || col == kStartCol || col == kStreamCol;
}

using Cells = char* [kNumColumns];

// The reader past its header, its next row numbered `first_line`.
void start_rows(Reader& in, const std::string& file, unsigned first_line) {
  in.read_header(io::ignore_extra_column | io::ignore_missing_column, "name", "class", "dtype",
                 "batch", "m", "n", "k", "flops", "bytes", "grid_x", "grid_y", "grid_z", "block_x",
                 "block_y", "block_z", "registers", "shared_bytes", "count", "duration_us", "gpu",
                 "start_us", "stream", "context", "l2", "net_bytes");
  if (!in.has_column("name")) throw InputError(file + ":1: missing required column 'name'");
  in.set_file_line(first_line - 1);
}

bool next_cells(Reader& in, Cells& c) {
  return in.read_row(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13],
                     c[14], c[15], c[16], c[17], c[18], c[19], c[20], c[21], c[22], c[23], c[24]);
}

// The row's own cells, checked as the full parse checks them (parse_row calls these in column order).
template <class At>
void parse_count_duration(const Cells& c, const At& at, Kernel& k) {
  if (parse_double_cell(c[kCountCol], at(kCountCol), k.count) && k.count <= 0)
    throw InputError(at(kCountCol).where() + ": count must be positive");
  if (parse_double_cell(c[kDurationCol], at(kDurationCol), k.duration_us) && k.duration_us < 0)
    throw InputError(at(kDurationCol).where() + ": duration must not be negative");
}
template <class At>
void parse_start_stream(const Cells& c, const At& at, Kernel& k) {
  parse_double_cell(c[kStartCol], at(kStartCol), k.start_us);
  parse_int_cell(c[kStreamCol], at(kStreamCol), k.stream);
}

// Every cell of a row into `k` (default-constructed), in column order: the first bad cell is the one
// named.
template <class At>
void parse_row(const Cells& c, const At& at, const KernelListOptions& opt, GpuCells& gpus, Kernel& k) {
  k.name = c[0] ? c[0] : "";
  if (k.name.empty()) throw InputError(at(0).where() + ": kernel name is empty");
  classify(k, c[1], at(1), opt);
  if (c[2] && *c[2]) {
    auto dt = parse_dtype(c[2]);
    if (!dt) throw InputError(at(2).where() + ": unknown dtype '" + c[2] + "'");
    k.dtype = *dt;
  }
  int64_t* ints[] = {&k.batch, &k.m, &k.n, &k.k};
  for (int i = 0; i < 4; ++i) {
    if (parse_int_cell(c[3 + i], at(3 + i), *ints[i]) && *ints[i] < 0)
      throw InputError(at(3 + i).where() + ": must not be negative");
  }
  if (k.batch == 0) k.batch = 1;
  for (int i : {7, 8}) {
    double& v = i == 7 ? k.flops : k.bytes;
    if (parse_double_cell(c[i], at(i), v) && v < 0)
      throw InputError(at(i).where() + ": must not be negative");
  }
  int64_t* launch[] = {&k.grid[0], &k.grid[1], &k.grid[2], &k.block[0], &k.block[1],
                       &k.block[2], &k.registers, &k.shared_bytes};
  for (int i = 0; i < 8; ++i) {
    if (parse_int_cell(c[9 + i], at(9 + i), *launch[i]) && *launch[i] < 0)
      throw InputError(at(9 + i).where() + ": must not be negative");
  }
  parse_count_duration(c, at, k);
  if (c[19] && *c[19]) k.gpu = gpus.name_of(c[19], at(19));
  parse_start_stream(c, at, k);
  if (c[22]) k.context = c[22];
  if (c[23] && *c[23]) {
    const std::string l2 = ascii_lower(c[23]);
    if (l2 != "cold" && l2 != "warm")
      throw InputError(at(23).where() + ": l2 must be 'cold' or 'warm' (got '" + std::string(c[23]) + "')");
    k.l2_cold = l2 == "cold";
  }
  if (c[24] && *c[24]) {
    parse_double_cell(c[24], at(24), k.net_bytes);
    if (!(k.net_bytes >= 0) || (known(k.bytes) && k.net_bytes > k.bytes))
      throw InputError(at(24).where() + ": net_bytes must be between 0 and the row's bytes (got '" +
                       std::string(c[24]) + "')");
  }
  k.derive_from_shape();
}

// Each row is parsed into the Kernel `slot()` returns, a default-constructed one per row; returns
// the rows read.
template <class Slot>
size_t read_rows(Reader& in, const std::string& file, const KernelListOptions& opt, unsigned first_line, Slot&& slot) {
  start_rows(in, file, first_line);
  Cells c = {};
  size_t rows = 0;
  GpuCells gpus(opt.gpus);
  while (next_cells(in, c)) {
    const unsigned line = in.get_file_line();
    auto at = [&](int col) { return CellRef{file, line, kKernelListColumns[col]}; };
    // Built in place: a million-row list would otherwise move each row's 288 bytes once more.
    parse_row(c, at, opt, gpus, slot());
    ++rows;
  }
  return rows;
}

// `expected_rows`: an estimate of the rows to come, reserved up front (0: none). A million-row trace
// otherwise grows its vector by doubling, and touching each new block costs a page fault per page:
// on this project's VMs page faults were a quarter of `kcast predict`'s time on such a trace.
// `first_line`: the file line of the first row after the header (a chunk of a larger file starts
// further down).
std::vector<Kernel> read_all(Reader& in, const std::string& file, const KernelListOptions& opt,
                             size_t expected_rows, unsigned first_line = 2) {
  std::vector<Kernel> out;
  try {
    out.reserve(expected_rows);
    advise_huge_pages(out.data(), out.capacity() * sizeof(Kernel));
  } catch (const std::bad_alloc&) {  // an estimate too large for the address space: grow as read
  }
  read_rows(in, file, opt, first_line, [&]() -> Kernel& { return out.emplace_back(); });
  return out;
}

// Lower case, without spaces, tabs and underscores: "Duration_us", "duration us" and "durationus" alike.
std::string squeezed(const std::string& s) {
  std::string out;
  for (char ch : s)
    if (ch != ' ' && ch != '\t' && ch != '_') out += lower_ascii(ch);
  return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The known column an unknown one most likely meant: the same letters but for case, spaces and
// underscores; a known column it is the start of (a missing unit: "duration" for "duration_us");
// or within two edits of one (one for names of six letters or fewer: "notes" is not "bytes"). Null: none.
const char* closest_column(const std::string& col) {
  const std::string s = squeezed(col);
  if (s.empty()) return nullptr;
  const char* best = nullptr;
  size_t best_d = 3;
  for (int i = 0; i < kNumColumns; ++i) {
    const std::string k = squeezed(kKernelListColumns[i]);
    if (s == k) return kKernelListColumns[i];
    if (s.size() >= 3 && k.rfind(s, 0) == 0 && best_d > 1) best = kKernelListColumns[i], best_d = 1;
    const size_t limit = k.size() <= 6 ? 1 : 2;
    const size_t d = edit_distance(s, k);
    if (d <= limit && d < best_d) best = kKernelListColumns[i], best_d = d;
  }
  return best;
}

void warn(const std::vector<std::string>& lines, const KernelListOptions& opt) {
  for (const std::string& l : lines) {
    if (opt.warnings) opt.warnings->push_back(l);
    else console_err() << "kcast: " << l << "\n";
  }
}

// `read(in)` on a reader of `src`, the parser's own errors as InputError.
template <class Read, class... Src>
auto read_guarded(Read&& read, Src&&... src) {
  try {
    Reader in(std::forward<Src>(src)...);
    return read(in);
  } catch (const io::error::base& e) {
    throw InputError(e.what());
  }
}

// Appenders for the writer, which builds each row in a string: a million rows through ostream's
// per-character sentries and printf took 1.5x the time Python needs to read the file it wrote from.
// to_chars with a precision prints what printf's %.10g prints.
void put_num(std::string& o, double v) {
  if (!known(v)) return;
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 10);
  o.append(buf, r.ptr);
}
void put_int(std::string& o, int64_t v, bool zero_is_empty = true) {
  if (v == 0 && zero_is_empty) return;
  char buf[24];
  o.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// Below twice this a file is read on one thread (csv_chunk_count).
constexpr size_t kMinChunkBytes = size_t(8) << 20;

// A large mapped kernel list, split at line ends into chunks of about 16 MB read on one thread per
// core. Each chunk's lines are counted first (a memchr pass, a few percent of the parse), so every
// chunk parses straight into its own slots of the result: no row is built twice or moved (moving a
// million 288-byte rows cost an eighth of `kcast predict`). Rows and errors come out as one reader
// would give them: the rows in file order (the parser rejects a line that holds no row; should a
// chunk still read fewer rows than lines, its gap is closed afterwards), the first error in the file
// with its line. fast-cpp-csv-parser splits lines before quotes, so a quoted field never spans lines
// and any line end is a row boundary.
struct Chunks {
  std::string_view header;
  std::vector<std::string_view> parts;
  std::vector<size_t> begin;  // the first slot of each part; begin.back(): the slots of all
  size_t threads = 1;
};

Chunks split_into_chunks(std::string_view bytes) {
  Chunks c;
  const size_t header_end = std::min(bytes.size(), bytes.find('\n') + 1);  // npos + 1 == 0: no newline
  c.header = header_end ? bytes.substr(0, header_end) : bytes;
  const std::string_view body = header_end ? bytes.substr(header_end) : std::string_view();
  c.threads = csv_chunk_count(body.size(), kMinChunkBytes);
  // One part a thread: a fast-cpp-csv-parser reader copies every byte through its own buffer (three
  // 16 MB blocks in Debian's build), fresh pages to fault in for each reader where the allocator
  // returns them at once (glibc, which `import kcast` runs on, unmaps blocks that large on free): a
  // reader per 16 MB part made the Python call 1.1x the binary; per thread it is 1.0x.
  c.parts = split_at_line_ends(body, c.threads);
  if (c.parts.empty()) c.parts.push_back(body);
  const size_t n = c.parts.size();
  std::vector<size_t> lines(n);
  parallel_for(n, unsigned(c.threads), [&](size_t i) {
    const std::string_view p = c.parts[i];
    // memchr from line end to line end: std::count compared byte by byte, 5% of a predict.
    size_t n_lines = 0;
    for (const char *at = p.data(), *end = p.data() + p.size();
         (at = static_cast<const char*>(std::memchr(at, '\n', size_t(end - at)))) != nullptr; ++at)
      ++n_lines;
    lines[i] = n_lines + (!p.empty() && p.back() != '\n');
  });
  c.begin.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) c.begin[i + 1] = c.begin[i] + lines[i];
  return c;
}

// Runs `parse(i, first_line)` (the rows part i read) on every part, on the threads; rethrows the first
// error in the file, with its line: its part is parsed again by `reparse(i, first_line)` with the
// part's true first line. Returns the rows each part read.
template <class Parse, class Reparse>
std::vector<size_t> parse_chunks(const Chunks& c, Parse&& parse, Reparse&& reparse) {
  const size_t n = c.parts.size();
  std::vector<size_t> rows(n, 0);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> first_failed{n};
  parallel_for(n, unsigned(c.threads), [&](size_t i) {
    if (i > first_failed.load()) return;  // an earlier part failed: its error is the one to report
    try {
      rows[i] = parse(i, 2u);  // its rows say line 2 onwards until one of them is wrong
    } catch (...) {
      errors[i] = std::current_exception();
      for (size_t f = first_failed.load(); i < f && !first_failed.compare_exchange_weak(f, i);) {
      }
    }
  });
  for (size_t i = 0; i < n; ++i) {
    if (!errors[i]) continue;
    if (i == 0) std::rethrow_exception(errors[i]);
    reparse(i, unsigned(c.begin[i] + 2));  // the header's line plus the lines of the parts before it
    std::rethrow_exception(errors[i]);     // not reached: the same rows fail the same way
  }
  return rows;
}

// The slots each part left unfilled closed up, `out` cut to the rows read.
template <class Vector>
void close_gaps(Vector& out, const Chunks& c, const std::vector<size_t>& rows) {
  size_t kept = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (kept != c.begin[i])
      std::move(out.begin() + std::ptrdiff_t(c.begin[i]), out.begin() + std::ptrdiff_t(c.begin[i] + rows[i]),
                out.begin() + std::ptrdiff_t(kept));
    kept += rows[i];
  }
  out.resize(kept);
}

// `out` resized to n, its memory advised onto huge pages before it is first touched (the advice
// after the elements are constructed came too late: the pages were faulted in 4 KiB at a time).
template <class Vector>
void sized_on_huge_pages(Vector& out, size_t n) {
  out.reserve(n);
  advise_huge_pages(out.data(), out.capacity() * sizeof(typename Vector::value_type));
  out.resize(n);
}

// A slot source over `out[begin, end)`: more rows than lines cannot happen (each row is a line).
template <class Vector>
auto slots(Vector& out, size_t begin, size_t end) {
  return [&out, at = begin, end]() mutable -> typename Vector::value_type& {
    if (at == end) throw std::logic_error("kernel list: more rows than lines in a chunk");
    return out[at++];
  };
}

// `read(reader)` on a reader of part i of `c`.
template <class Read>
size_t read_part(const std::string& path, const Chunks& c, size_t i, Read&& read) {
  return read_guarded(read, path, std::make_unique<CsvChunkSource>(c.header, c.parts[i]));
}

// Part i parsed again for its error's line, into scratch rows.
auto reparse_for_line(const std::string& path, const KernelListOptions& opt, const Chunks& c) {
  return [&](size_t i, unsigned first_line) {
    std::vector<Kernel> scratch;
    read_part(path, c, i, [&](Reader& in) {
      return read_rows(in, path, opt, first_line, [&]() -> Kernel& { return scratch.emplace_back(); });
    });
  };
}

std::vector<Kernel> read_in_chunks(const std::string& path, const KernelListOptions& opt, std::string_view bytes) {
  const Chunks c = split_into_chunks(bytes);
  std::vector<Kernel> out;
  sized_on_huge_pages(out, c.begin.back());
  const std::vector<size_t> rows = parse_chunks(
      c,
      [&](size_t i, unsigned first_line) {
        return read_part(path, c, i, [&](Reader& in) {
          return read_rows(in, path, opt, first_line, slots(out, c.begin[i], c.begin[i + 1]));
        });
      },
      reparse_for_line(path, opt, c));
  close_gaps(out, c, rows);
  return out;
}

// The kernels one part's rows launched, each once, found by the text of the row's cells other than
// its own (is_row_column): rows whose texts agree launched the same kernel, so a kernel seen before
// is not parsed or classified again (its cells passed every check the first time).
struct PartKinds {
  std::vector<Kernel> kinds;
  std::unordered_map<std::string, uint32_t> index;
  std::vector<const std::string*> keys;  // by kind: its key in `index`
};

// The key of a row: its kernel's cells, each ended by a NUL (cells are C strings), an absent one a
// lone \x01.
void kind_text(const Cells& c, std::string& key) {
  key.clear();
  for (int col = 0; col < kNumColumns; ++col) {
    if (is_row_column(col)) continue;
    if (c[col]) key += c[col];
    else key += '\x01';
    key += '\0';
  }
}

// A part's rows into the slots `slot()` gives, their kinds into `pk` (kind numbers local to the part).
template <class Slot>
size_t read_table_rows(Reader& in, const std::string& file, const KernelListOptions& opt, unsigned first_line,
                       PartKinds& pk, Slot&& slot) {
  start_rows(in, file, first_line);
  Cells c = {};
  size_t rows = 0;
  GpuCells gpus(opt.gpus);
  std::string key;
  while (next_cells(in, c)) {
    const unsigned line = in.get_file_line();
    auto at = [&](int col) { return CellRef{file, line, kKernelListColumns[col]}; };
    kind_text(c, key);
    Kernel k;  // the row's own fields, and its kernel's when the kernel is new
    uint32_t kind;
    if (auto it = pk.index.find(key); it != pk.index.end()) {
      kind = it->second;
      parse_count_duration(c, at, k);
      parse_start_stream(c, at, k);
    } else {
      parse_row(c, at, opt, gpus, k);
      kind = uint32_t(pk.kinds.size());
      pk.keys.push_back(&pk.index.emplace(key, kind).first->first);
      pk.kinds.push_back(k);
    }
    slot() = {k.count, k.duration_us, k.start_us, k.stream, kind};
    ++rows;
  }
  return rows;
}

KernelTable read_table_in_chunks(const std::string& path, const KernelListOptions& opt, std::string_view bytes) {
  const Chunks c = split_into_chunks(bytes);
  KernelTable t;
  sized_on_huge_pages(t.rows, c.begin.back());
  const size_t n = c.parts.size();
  std::vector<PartKinds> kinds(n);
  const std::vector<size_t> rows = parse_chunks(
      c,
      [&](size_t i, unsigned first_line) {
        return read_part(path, c, i, [&](Reader& in) {
          return read_table_rows(in, path, opt, first_line, kinds[i], slots(t.rows, c.begin[i], c.begin[i + 1]));
        });
      },
      reparse_for_line(path, opt, c));
  // The parts' kinds merged in file order, so kinds come in the order of their first rows.
  std::unordered_map<std::string_view, uint32_t> index;
  std::vector<std::vector<uint32_t>> global(n);
  for (size_t i = 0; i < n; ++i) {
    PartKinds& pk = kinds[i];
    global[i].resize(pk.kinds.size());
    for (size_t j = 0; j < pk.kinds.size(); ++j) {
      auto [it, added] = index.emplace(*pk.keys[j], uint32_t(t.kinds.size()));
      if (added) t.kinds.push_back(std::move(pk.kinds[j]));
      global[i][j] = it->second;
    }
  }
  parallel_for(n, unsigned(c.threads), [&](size_t i) {
    for (size_t r = c.begin[i]; r < c.begin[i] + rows[i]; ++r) t.rows[r].kind = global[i][t.rows[r].kind];
  });
  close_gaps(t.rows, c, rows);
  return t;
}

}  // namespace

std::vector<std::string> near_miss_columns(const std::string& header_line, const std::string& file) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= header_line.size()) {
    size_t end = header_line.find(',', at);
    if (end == std::string::npos) end = header_line.size();
    std::string col = header_line.substr(at, end - at);
    at = end + 1;
    if (!col.empty() && col.back() == '\r') col.pop_back();
    if (col.size() >= 2 && col.front() == '"' && col.back() == '"') col = col.substr(1, col.size() - 2);
    bool known_column = false;
    for (int i = 0; i < kNumColumns; ++i) known_column |= col == kKernelListColumns[i];
    if (known_column || col.empty()) continue;
    // The reader trims spaces and tabs around a header name: such a column is read, but say so.
    const size_t first = col.find_first_not_of(" \t"), last = col.find_last_not_of(" \t");
    const std::string trimmed = first == std::string::npos ? "" : col.substr(first, last - first + 1);
    bool trimmed_known = false;
    for (int i = 0; i < kNumColumns; ++i) trimmed_known |= trimmed == kKernelListColumns[i];
    if (trimmed_known) {
      out.push_back(file + ":1: column '" + col + "' is read as '" + trimmed +
                    "' (spaces around a header name are trimmed)");
      continue;
    }
    if (const char* near = closest_column(col))
      out.push_back(file + ":1: column '" + col + "' is not a kernel-list column and is ignored; did you mean '" +
                    near + "'?");
  }
  return out;
}

std::vector<Kernel> parse_kernel_list(const std::string& text, const std::string& file,
                                      const KernelListOptions& opt) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError(file + ": empty file (expected a kernel-list CSV with a header row)");
  warn(near_miss_columns(text.substr(0, text.find('\n')), file), opt);
  return read_guarded([&](Reader& in) { return read_all(in, file, opt, 0); }, file,
                      std::make_unique<MemoryByteSource>(text));
}

namespace {

// The file at `path` read by `chunked(mapped bytes)` when it is large, else by `whole(reader, expected
// rows)`; standard input by `text(contents)`. Both warn first of near-miss columns.
template <class Chunked, class Whole, class Text>
auto read_list_file(const std::string& path, const KernelListOptions& opt, Chunked&& chunked, Whole&& whole,
                    Text&& text) {
  if (path == "-") return text(read_file("-"));
  std::ifstream probe(path, std::ios::binary);
  if (!probe) throw InputError(path + ": cannot open");
  probe.seekg(0, std::ios::end);
  const std::streamoff size = probe.tellg();
  if (size <= 0) throw InputError(path + ": empty file (expected a kernel-list CSV with a header row)");
  // Rows to expect: the file's size over the mean line length of its first 64 KiB (its tail may run
  // longer or shorter; a miss costs one more growth of the vector, or untouched address space).
  probe.seekg(0);
  std::string head(size_t(std::min<std::streamoff>(size, 1 << 16)), '\0');
  probe.read(head.data(), std::streamsize(head.size()));
  const size_t lines = size_t(std::count(head.begin(), head.begin() + probe.gcount(), '\n'));
  const size_t expected = lines > 1 ? size_t(double(size) * double(lines) / double(probe.gcount()) * 1.05) : 0;
  warn(near_miss_columns(head.substr(0, head.find('\n')), path), opt);
  const MappedFile mapped(path);
  if (mapped.valid() && mapped.bytes().size() >= 2 * kMinChunkBytes) return chunked(mapped.bytes());
  return read_guarded([&](Reader& in) { return whole(in, expected); }, path);
}

}  // namespace

std::vector<Kernel> read_kernel_list(const std::string& path, const KernelListOptions& opt) {
  return read_list_file(
      path, opt, [&](std::string_view bytes) { return read_in_chunks(path, opt, bytes); },
      [&](Reader& in, size_t expected) { return read_all(in, path, opt, expected); },
      [&](const std::string& text) { return parse_kernel_list(text, "<stdin>", opt); });
}

KernelTable read_kernel_table(const std::string& path, const KernelListOptions& opt) {
  return read_list_file(
      path, opt, [&](std::string_view bytes) { return read_table_in_chunks(path, opt, bytes); },
      [&](Reader& in, size_t expected) { return KernelTable::of_rows(read_all(in, path, opt, expected)); },
      [&](const std::string& text) { return KernelTable::of_rows(parse_kernel_list(text, "<stdin>", opt)); });
}

void append_kernel_list_header(std::string& line) {
  for (int i = 0; i < kNumColumns; ++i) (line += i ? "," : "") += kKernelListColumns[i];
  line += '\n';
}

void append_kernel_row(std::string& line, const Kernel& k) {
  // Each after a comma: a number (empty when unknown), an integer (empty when 0), a text field.
  auto num = [&](double v) { put_num(line += ',', v); };
  auto integer = [&](int64_t v) { put_int(line += ',', v); };
  auto text = [&](const std::string& v) { append_csv_field(line += ',', v); };
  append_csv_field(line, k.name);
  (line += ',') += to_string(k.cls);
  (line += ',') += to_string(k.dtype);
  line += ',';
  if (k.has_shape()) put_int(line, k.batch, false);
  for (int64_t v : {k.m, k.n, k.k}) integer(v);
  num(k.flops);
  num(k.bytes);
  for (int64_t v : {k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.registers, k.shared_bytes})
    integer(v);
  num(k.count);
  num(k.duration_us);
  text(k.gpu);
  num(k.start_us);
  line += ',';
  if (k.stream >= 0) put_int(line, k.stream, false);
  text(k.context);
  (line += ',') += k.l2_cold ? "cold" : "";
  line += ',';
  if (k.net_bytes > 0) put_num(line, k.net_bytes);
  line += '\n';
}

void write_kernel_list(const std::vector<Kernel>& kernels, std::ostream& o) {
  std::string text;
  append_kernel_list_header(text);
  for (const Kernel& k : kernels) {
    append_kernel_row(text, k);
    if (text.size() >= (size_t(1) << 16)) {  // written in blocks
      o.write(text.data(), std::streamsize(text.size()));
      text.clear();
    }
  }
  o.write(text.data(), std::streamsize(text.size()));
}

void write_kernel_list_file(const std::vector<Kernel>& kernels, const std::string& path) {
  write_file_atomically(path, [&](std::ostream& o) { write_kernel_list(kernels, o); });
}

}  // namespace kcast
