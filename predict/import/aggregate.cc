// KernelCollector (all rows, start order) and KernelAggregator (identical kernels merged into one
// row with a count and mean duration, in memory bounded by the number of distinct kernels).
#include <algorithm>
#include <cstring>
#include <functional>
#include <ostream>
#include <unordered_map>

#include "io/kernel_list_csv.h"
#include "predict/import/import.h"

namespace kcast {

namespace {

// Unknown starts sort last; ties keep input order (stable sort).
bool start_before(double a, double b) {
  if (!known(a)) return false;
  if (!known(b)) return true;
  return a < b;
}

struct Key {
  std::string name, gpu;
  KernelClass cls;
  DType dtype;
  int64_t shape[4];
  int64_t launch[6];
  double copy_bytes;  // bytes of memcpy / memset rows (their identity); NaN for kernels
  bool l2_cold;

  bool operator==(const Key& o) const {
    auto same = [](double a, double b) { return a == b || (!known(a) && !known(b)); };
    return cls == o.cls && dtype == o.dtype && std::memcmp(shape, o.shape, sizeof shape) == 0 &&
           std::memcmp(launch, o.launch, sizeof launch) == 0 && same(copy_bytes, o.copy_bytes) &&
           l2_cold == o.l2_cold && name == o.name && gpu == o.gpu;
  }
};

struct KeyHash {
  size_t operator()(const Key& k) const noexcept {
    size_t h = std::hash<std::string>{}(k.name);
    auto mix = [&h](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(std::hash<std::string>{}(k.gpu));
    mix(uint64_t(k.l2_cold) << 16 | uint64_t(k.cls) << 8 | uint64_t(k.dtype));
    for (int64_t v : k.shape) mix(uint64_t(v));
    for (int64_t v : k.launch) mix(uint64_t(v));
    if (known(k.copy_bytes)) mix(std::hash<double>{}(k.copy_bytes));
    return h;
  }
};

// Running weighted mean of a field that may be unknown on some rows.
struct Mean {
  double sum = 0, weight = 0;
  void add(double v, double w) {
    if (known(v)) sum += v * w, weight += w;
  }
  double value() const { return weight > 0 ? sum / weight : kUnknown; }
};

struct Group {
  Kernel first;  // fields outside the key (registers, stream, ...) come from the first row
  size_t order;  // arrival index, to break start-time ties stably
  double count = 0;
  Mean duration, flops, bytes;
};

}  // namespace

void KernelCollector::add(Kernel&& k) {
  constexpr size_t kBlock = size_t(1) << 14;
  if (blocks_.empty() || blocks_.back().size() == blocks_.back().capacity()) {
    blocks_.emplace_back();
    blocks_.back().reserve(kBlock);
  }
  blocks_.back().push_back(std::move(k));
  ++size_;
}

std::vector<Kernel> KernelCollector::take() {
  std::vector<Kernel> out;
  out.reserve(size_);
  for (std::vector<Kernel>& b : blocks_) {
    out.insert(out.end(), std::make_move_iterator(b.begin()), std::make_move_iterator(b.end()));
    std::vector<Kernel>().swap(b);  // freed as it goes: the rows are held once, plus a block
  }
  blocks_.clear();
  size_ = 0;
  auto before = [](const Kernel& a, const Kernel& b) { return start_before(a.start_us, b.start_us); };
  if (!std::is_sorted(out.begin(), out.end(), before)) std::stable_sort(out.begin(), out.end(), before);
  return out;
}

void KernelCollector::merge(KernelSink&& part) {
  auto& other = dynamic_cast<KernelCollector&>(part);
  for (std::vector<Kernel>& b : other.blocks_) blocks_.push_back(std::move(b));
  size_ += other.size_;
  other.blocks_.clear();
  other.size_ = 0;
}

void KernelListText::note_order(bool in_order) {
  if (in_order) return;
  in_order_ = false;
  if (stream_) throw OutOfStartOrder{};  // what was written is discarded: no use writing more
}

void KernelListText::write_out(const std::string& text) {
  if (!header_written_) {
    std::string header;
    append_kernel_list_header(header);
    stream_->write(header.data(), std::streamsize(header.size()));
    header_written_ = true;
  }
  stream_->write(text.data(), std::streamsize(text.size()));
}

void KernelListText::add(Kernel&& k) {
  constexpr size_t kBlockBytes = size_t(1) << 20;
  if (blocks_.empty() || blocks_.back().size() + 4096 > kBlockBytes) {  // rows of up to 4 KiB fit
    if (stream_ && !blocks_.empty()) {  // the full block out, its memory the next one's
      write_out(blocks_.back());
      spare_ = std::move(blocks_.back());
      blocks_.pop_back();
    }
    blocks_.emplace_back(std::move(spare_));
    spare_ = {};
    blocks_.back().clear();
    blocks_.back().reserve(kBlockBytes - 64);  // a string's capacity + 1 within jemalloc's 1 MiB class
  }
  append_kernel_row(blocks_.back(), k);
  note_order(rows_ == 0 || !start_before(k.start_us, last_start_));
  if (rows_ == 0) first_start_ = k.start_us;
  last_start_ = k.start_us;
  ++rows_;
}

void KernelListText::merge(KernelSink&& part) {
  auto& other = dynamic_cast<KernelListText&>(part);
  if (other.rows_ == 0) return;
  note_order(in_order_ && other.in_order_ && !(rows_ > 0 && start_before(other.first_start_, last_start_)));
  if (rows_ == 0) first_start_ = other.first_start_;
  last_start_ = other.last_start_;
  rows_ += other.rows_;
  if (stream_) {
    for (const std::string& b : blocks_) write_out(b);
    blocks_.clear();
    for (const std::string& b : other.blocks_) write_out(b);
  } else {
    for (std::string& b : other.blocks_) blocks_.push_back(std::move(b));
  }
  other.blocks_.clear();
  other.rows_ = 0;
}

void KernelListText::write(std::ostream& out) const {
  std::string header;
  append_kernel_list_header(header);
  out.write(header.data(), std::streamsize(header.size()));
  for (const std::string& b : blocks_) out.write(b.data(), std::streamsize(b.size()));
}

void KernelListText::finish() {
  if (!stream_) return;
  for (const std::string& b : blocks_) write_out(b);
  blocks_.clear();
  if (!header_written_) write_out("");
}

struct KernelAggregator::Impl {
  std::unordered_map<Key, Group, KeyHash> groups;
};

KernelAggregator::KernelAggregator() : impl_(std::make_unique<Impl>()) {}
KernelAggregator::~KernelAggregator() = default;
size_t KernelAggregator::groups() const { return impl_->groups.size(); }

void KernelAggregator::add(Kernel&& k) {
  const bool copy = k.cls == KernelClass::memcpy || k.cls == KernelClass::memset;
  // The strings move into the key (no copy per row); take() copies them back once per group.
  Key key{std::move(k.name), std::move(k.gpu), k.cls, k.dtype, {k.batch, k.m, k.n, k.k},
          {k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2]},
          copy ? k.bytes : kUnknown, k.l2_cold};
  auto [it, fresh] = impl_->groups.try_emplace(std::move(key));
  Group& g = it->second;
  const double w = k.count > 0 ? k.count : 1;
  g.count += w;
  g.duration.add(k.duration_us, w);
  g.flops.add(k.flops, w);
  g.bytes.add(k.bytes, w);
  if (fresh) {
    g.order = impl_->groups.size();
    g.first = std::move(k);
  } else if (start_before(k.start_us, g.first.start_us)) {
    g.first.start_us = k.start_us;
  }
}

// A part's rows carry their count and means; add() weights them by count, so merging equals
// having aggregated every row here.
void KernelAggregator::merge(KernelSink&& part) {
  for (Kernel& k : dynamic_cast<KernelAggregator&>(part).take()) add(std::move(k));
}

std::vector<Kernel> KernelAggregator::take() {
  std::vector<Group*> order;
  order.reserve(impl_->groups.size());
  for (auto& [key, g] : impl_->groups) {
    g.first.name = key.name;
    g.first.gpu = key.gpu;
    order.push_back(&g);
  }
  std::sort(order.begin(), order.end(), [](const Group* a, const Group* b) {
    if (start_before(a->first.start_us, b->first.start_us)) return true;
    if (start_before(b->first.start_us, a->first.start_us)) return false;
    return a->order < b->order;
  });
  std::vector<Kernel> out;
  out.reserve(order.size());
  for (Group* g : order) {
    Kernel k = std::move(g->first);
    k.count = g->count;
    k.duration_us = g->duration.value();
    k.flops = g->flops.value();
    k.bytes = g->bytes.value();
    out.push_back(std::move(k));
  }
  impl_->groups.clear();
  return out;
}

}  // namespace kcast
