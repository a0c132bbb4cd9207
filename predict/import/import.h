// `kcast import`: trace readers (Nsight Systems SQLite and CSV, Nsight Compute CSV, PyTorch profiler /
// Kineto JSON, the native kernel list), format detection, step selection and aggregation.
// Every reader pushes kernels into a KernelSink so that `--aggregate` can merge rows as they stream
// in (bounded memory on million-row traces); import_trace() wraps that into "a kernel list in start
// order". Bad input throws InputError naming the file and the place (line, event index, table).
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/classifier.h"
#include "model/gpu_database.h"
#include "model/kernel.h"

namespace kcast {

enum class TraceFormat { automatic, nsys_sqlite, nsys_csv, ncu_csv, kineto_json, kcast_csv };
std::string_view to_string(TraceFormat f);
std::optional<TraceFormat> parse_trace_format(std::string_view s);

// Which part of a trace to keep (at most one of nvtx / profiler_step / annotation).
struct StepSelection {
  std::string nvtx;            // nsys-sqlite: NVTX range name
  int instance = 1;            // 1-based occurrence of the nvtx / annotation range
  int64_t profiler_step = -1;  // kineto: ProfilerStep#N
  std::string annotation;      // kineto: any user_annotation / gpu_user_annotation name
  bool any() const { return !nvtx.empty() || profiler_step >= 0 || !annotation.empty(); }
};

struct ImportOptions {
  const GpuDatabase* gpus = nullptr;       // null: default_gpu_database()
  const Classifier* classifier = nullptr;  // null: default_classifier()
  std::string gpu;                         // --gpu: overrides the device the trace records
  StepSelection step;
  // Receives warnings (GPU resolved by properties, ...); null: "kcast: warning: ..." on stderr.
  std::function<void(const std::string&)> warn;
  // Threads for readers that split large files (nsys-csv): 0 = automatic (one per core, for files
  // of tens of MB and more); N > 0 = exactly N chunks whatever the size (tests use this).
  unsigned threads = 0;
};

// Where readers put kernels. Readers push in any order; sinks sort when they hand the list out.
class KernelSink {
 public:
  virtual ~KernelSink() = default;
  virtual void add(Kernel&& k) = 0;
  // For readers that parse parts of a file on several threads: an empty sink of the same kind
  // (null: the sink cannot be split, read sequentially), and folding a filled part back in. Parts
  // are merged in file order.
  virtual std::unique_ptr<KernelSink> make_part() const { return nullptr; }
  virtual void merge(KernelSink&& /*part*/) {}
};

// Keeps every kernel; take() returns them sorted by start_us (stable; unknown starts last).
// Rows are kept in blocks of fixed size: a million-row trace grown in one vector moved every row
// again at each doubling (and a thread's part once more to merge), and took its pages fresh each time.
class KernelCollector : public KernelSink {
 public:
  void add(Kernel&& k) override;
  std::unique_ptr<KernelSink> make_part() const override { return std::make_unique<KernelCollector>(); }
  void merge(KernelSink&& part) override;
  std::vector<Kernel> take();
  size_t size() const { return size_; }

 private:
  std::vector<std::vector<Kernel>> blocks_;
  size_t size_ = 0;
};

// Merges identical kernels (name, class, dtype, shape, grid, block, gpu; plus bytes for copies and
// memsets, whose size is what distinguishes them) into one row: count = invocations, duration /
// flops / bytes = means, start_us = the first start. Memory grows with distinct kernels, not rows.
class KernelAggregator : public KernelSink {
 public:
  KernelAggregator();
  ~KernelAggregator() override;
  void add(Kernel&& k) override;
  std::unique_ptr<KernelSink> make_part() const override { return std::make_unique<KernelAggregator>(); }
  void merge(KernelSink&& part) override;
  std::vector<Kernel> take();  // groups ordered by their first start_us
  size_t groups() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The kernel-list CSV's text of every row, formatted as rows arrive (on the reading threads, for a
// split file) instead of kept as Kernels: `kcast import` of a million-row trace holds its text, not
// 288 bytes and a name per row. The text is the kernel list only when the rows came in start order
// (Nsight Systems writes them so; in_start_order() says); else the caller sorts (import_trace).
//
// Streaming: given `stream`, the text goes out as it completes (the header first), each block written
// once full or merged and its memory used again: a million rows are 180 MB of text, and holding it
// to the end was a third of the import's time in first-touching fresh pages. A row out of start order
// then throws OutOfStartOrder at once (the caller discards what was written and sorts); finish()
// writes the rest.
class KernelListText : public KernelSink {
 public:
  struct OutOfStartOrder {};
  explicit KernelListText(std::ostream* stream = nullptr) : stream_(stream) {}
  void add(Kernel&& k) override;
  std::unique_ptr<KernelSink> make_part() const override { return std::make_unique<KernelListText>(); }
  void merge(KernelSink&& part) override;
  bool in_start_order() const { return in_order_; }
  size_t rows() const { return rows_; }
  // The header line, then the rows (not streaming).
  void write(std::ostream& out) const;
  // Streaming: what is left, header included when no row came.
  void finish();

 private:
  void note_order(bool in_order);
  void write_out(const std::string& text);
  std::vector<std::string> blocks_;  // of about 1 MiB each: merged parts move theirs, no copy
  std::string spare_;                // streaming: a written block's memory, for the next
  std::ostream* stream_ = nullptr;
  bool header_written_ = false;
  size_t rows_ = 0;
  bool in_order_ = true;
  double first_start_ = 0, last_start_ = 0;
};

// Format from the file's first bytes and its extension; InputError naming the file when none fits.
TraceFormat detect_format(const std::string& path);
TraceFormat detect_format_bytes(std::string_view head, const std::string& name);

// Readers. read_* take a path; parse_* take the file's bytes (`name` is used in messages).
void read_nsys_csv(const std::string& path, const ImportOptions& opt, KernelSink& sink);
void parse_nsys_csv(const std::string& bytes, const std::string& name, const ImportOptions& opt,
                    KernelSink& sink);
void read_nsys_sqlite(const std::string& path, const ImportOptions& opt, KernelSink& sink);
void parse_nsys_sqlite(const std::string& bytes, const std::string& name, const ImportOptions& opt,
                       KernelSink& sink);
void read_ncu_csv(const std::string& path, const ImportOptions& opt, KernelSink& sink);
void parse_ncu_csv(const std::string& bytes, const std::string& name, const ImportOptions& opt,
                   KernelSink& sink);
void read_kineto_json(const std::string& path, const ImportOptions& opt, KernelSink& sink);
void parse_kineto_json(const std::string& bytes, const std::string& name, const ImportOptions& opt,
                       KernelSink& sink);
void read_kcast_csv(const std::string& path, const ImportOptions& opt, KernelSink& sink);

// Reads `path` ("-" = stdin, not for nsys-sqlite) in `format` (automatic: detect_format) into `sink`.
void read_trace(const std::string& path, TraceFormat format, const ImportOptions& opt, KernelSink& sink);

// Reads `path` ("-" = stdin, not for nsys-sqlite) in `format` (automatic: detect_format) and returns
// the kernel list in start order, aggregated when asked.
std::vector<Kernel> import_trace(const std::string& path, TraceFormat format,
                                 const ImportOptions& opt, bool aggregate);

}  // namespace kcast
