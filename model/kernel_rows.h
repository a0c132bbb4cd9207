// A kernel list as the predictor reads it: per row its count, measured duration, start and stream,
// and the kernel it launched — every other field of the row, shared by all rows that launched the
// same kernel on the same GPU in the same context.
//
// Why: a profiler trace launches a few hundred distinct kernels a million times. Held as a million
// `Kernel`s (288 bytes and a heap-allocated name each) it took 0.6 GB of fresh memory, and on this
// project's VMs first-touching fresh memory was most of `kcast predict`'s time. A `KernelTable`
// holds the distinct kernels once and 40 bytes per row.
//
// `KernelRows` is the predictor's view: of a `KernelTable`, or of a plain `std::vector<Kernel>` (each
// row then its own kind, nothing copied), so the kernel lists `kcast synth` and `kcast serve` build
// in memory are read through the same code. A view does not own what it shows: the table or vector
// must outlive it.
#pragma once
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "model/kernel.h"

namespace kcast {

// An allocator whose value-less construct() leaves a trivial T uninitialized: a reader resizes its
// rows once and each thread then writes (and first touches) its own, instead of one thread zeroing
// every page up front.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}  // NOLINT: as std::allocator
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct KernelTable {
  struct Row {  // trivial: rows.resize() leaves them for the reader to fill
    double count, duration_us, start_us;
    int64_t stream;
    uint32_t kind;
  };
  // The distinct kernels, in the order of their first row. Their own count, duration_us, start_us and
  // stream are not read: each row's are in `rows`.
  std::vector<Kernel> kinds;
  std::vector<Row, UninitializedAllocator<Row>> rows;

  // Each row its own kind, the rows moved in (a list read whole, small).
  static KernelTable of_rows(std::vector<Kernel>&& rows);
};

class KernelRows {
 public:
  KernelRows() = default;
  // Implicit: every function that reads a kernel list through a view takes a vector as well.
  KernelRows(const std::vector<Kernel>& rows) : full_(rows.data()), n_(rows.size()), kinds_n_(rows.size()) {}  // NOLINT
  KernelRows(const KernelTable& t)  // NOLINT(google-explicit-constructor): as above
      : kinds_(t.kinds.data()), rows_(t.rows.data()), n_(t.rows.size()), kinds_n_(t.kinds.size()) {}

  size_t size() const { return n_; }
  // Over a table's rows (40 bytes each, the fields of each row together), else over full Kernels.
  bool is_table() const { return full_ == nullptr; }
  bool empty() const { return n_ == 0; }
  // The kernel row r launched: every field but count, duration_us, start_us and stream is the row's.
  const Kernel& kind(size_t r) const { return full_ ? full_[r] : kinds_[rows_[r].kind]; }
  uint32_t kind_of(size_t r) const { return full_ ? uint32_t(r) : rows_[r].kind; }
  size_t kind_count() const { return kinds_n_; }
  const Kernel& kind_at(size_t i) const { return full_ ? full_[i] : kinds_[i]; }
  double count(size_t r) const { return full_ ? full_[r].count : rows_[r].count; }
  double duration_us(size_t r) const { return full_ ? full_[r].duration_us : rows_[r].duration_us; }
  double start_us(size_t r) const { return full_ ? full_[r].start_us : rows_[r].start_us; }
  int64_t stream(size_t r) const { return full_ ? full_[r].stream : rows_[r].stream; }
  // Row r whole.
  Kernel row(size_t r) const {
    if (full_) return full_[r];
    Kernel k = kinds_[rows_[r].kind];
    k.count = rows_[r].count, k.duration_us = rows_[r].duration_us, k.start_us = rows_[r].start_us;
    k.stream = rows_[r].stream;
    return k;
  }

 private:
  const Kernel* full_ = nullptr;  // a vector's rows, or null for a table's
  const Kernel* kinds_ = nullptr;
  const KernelTable::Row* rows_ = nullptr;
  size_t n_ = 0, kinds_n_ = 0;
};

inline KernelTable KernelTable::of_rows(std::vector<Kernel>&& rows) {
  KernelTable t;
  t.rows.resize(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    const Kernel& k = rows[r];
    t.rows[r] = {k.count, k.duration_us, k.start_us, k.stream, uint32_t(r)};
  }
  t.kinds = std::move(rows);
  return t;
}

}  // namespace kcast
