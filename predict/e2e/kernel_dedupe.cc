#include "predict/e2e/kernel_dedupe.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <unordered_map>

namespace kcast {

namespace {

// The fields CostModel::predict reads. Doubles are compared by bit pattern with every NaN mapped to
// one pattern, so "unknown" equals "unknown" and no epsilon can merge kernels the model separates.
struct Key {
  uint64_t head;   // named SGEMM tile and split, conv algorithm, class and dtype
  uint64_t flags;  // what the kernel's name or the file says about how it runs (key_of)
  int64_t batch, m, n, k;
  uint64_t flops, bytes, net_bytes;  // net_bytes: a collective's bytes that leave the node
  bool operator==(const Key&) const = default;
};

uint64_t bits(double v) {
  if (std::isnan(v)) return 0x7ff8000000000000ull;
  return std::bit_cast<uint64_t>(v);
}

Key key_of(const Kernel& k) {
  // The named SGEMM tile (11 bits each side: extents up to 1024) and, with it, the grid's z extent
  // (its K split, up to 4096) keep kernels that ran differently apart.
  const uint64_t split = k.tile.known() ? uint64_t(std::clamp<int64_t>(k.grid[2], 0, 4096)) : 0;
  const uint64_t tile = split << 25 | uint64_t(k.tile.family) << 22 | uint64_t(k.tile.m & 0x7ff) << 11 |
                        uint64_t(k.tile.n & 0x7ff);
  // A kernel that starts with a cold L2 (Kernel::l2_cold) is timed without the L2 share, a norm or
  // softmax that reads its rows once (Kernel::row_read_once) without the extra passes, an attention
  // kernel written with mma.sync (Kernel::mma_sync) at its architecture's fraction, a copy over the
  // link it crosses (Kernel::copy), one whose threads keep an element in flight each (Kernel::access)
  // with the CTA size its launch recorded.
  const uint64_t cta = k.access == ThreadAccess::none ? 0 : uint64_t(std::clamp<int64_t>(k.block[0], 0, 4096));
  const uint64_t flags = uint64_t(k.l2_cold) | uint64_t(k.row_read_once) << 1 | uint64_t(k.mma_sync) << 2 |
                         uint64_t(k.copy) << 3 | uint64_t(k.access) << 8 | cta << 16;
  return Key{tile << 24 | uint64_t(k.conv_algo) << 16 | uint64_t(k.cls) << 8 | uint64_t(k.dtype),
             flags, k.batch, k.m, k.n, k.k, bits(k.flops), bits(k.bytes), bits(k.net_bytes)};
}

struct KeyHash {
  size_t operator()(const Key& key) const {
    // splitmix64-style mixing of each word: cheap and well spread for small integer shapes.
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint64_t w : {key.head, key.flags, uint64_t(key.batch), uint64_t(key.m), uint64_t(key.n), uint64_t(key.k),
                       key.flops, key.bytes, key.net_bytes}) {
      h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h ^= h >> 31;
      h *= 0xbf58476d1ce4e5b9ull;
    }
    return size_t(h ^ (h >> 29));
  }
};

}  // namespace

bool same_model_inputs(const Kernel& a, const Kernel& b) { return key_of(a) == key_of(b); }

UniqueKernels dedupe_kernels(const KernelRows& rows) {
  // The distinct kernel of each kind, then of each row (for a vector's rows, kinds are rows).
  std::vector<uint32_t> of_kind(rows.kind_count());
  size_t distinct = 0;
  {
    std::unordered_map<Key, uint32_t, KeyHash> index;
    index.reserve(1024);
    for (size_t i = 0; i < of_kind.size(); ++i) {
      auto [it, inserted] = index.try_emplace(key_of(rows.kind_at(i)), uint32_t(distinct));
      distinct += inserted;
      of_kind[i] = it->second;
    }
  }
  // A table lists its kinds in the order of their first rows, so the numbering is the rows' order too.
  UniqueKernels u;
  u.of_row.resize(rows.size());
  u.rep.assign(distinct, UINT32_MAX);
  for (size_t r = 0; r < rows.size(); ++r) {
    const uint32_t d = of_kind[rows.kind_of(r)];
    u.of_row[r] = d;
    if (u.rep[d] == UINT32_MAX) u.rep[d] = uint32_t(r);
  }
  return u;
}

}  // namespace kcast
