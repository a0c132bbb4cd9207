// Shared state of one kcast-microbench run: the device under test, the run mode, and the result rows
// every benchmark appends to (Row, result_row.h). This tool deliberately includes nothing from
// the kcast libraries: the two only share that CSV format.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "microbench/result_row.h"

namespace kcast::microbench {

// A CUDA runtime error, with what was being done when it happened.
struct CudaError : std::runtime_error {
  CudaError(cudaError_t code, const std::string& what)
      : std::runtime_error(what + ": " + cudaGetErrorString(code)), code(code) {}
  cudaError_t code;
};

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaError(e, what);
}

struct BenchContext {
  int device = 0;
  cudaDeviceProp prop{};
  bool quick = false;
  std::string device_name;  // prop.name, the `device` column of every row
  std::vector<Row> rows;

  int cc() const { return prop.major * 10 + prop.minor; }  // 80 for compute capability 8.0
  size_t l2_bytes() const { return size_t(prop.l2CacheSize > 0 ? prop.l2CacheSize : 4 << 20); }
  // Time budget for one measurement point (the noise criterion usually stops earlier).
  double point_seconds() const { return quick ? 0.15 : 0.6; }
  void add(Row r) { rows.push_back(std::move(r)); }
};

// Free device memory in bytes right now.
inline size_t free_device_memory() {
  size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  return free_b;
}

// Owning device allocation (no copies; moves only).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes) check(cudaMalloc(&ptr_, bytes), "cudaMalloc");
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
  template <typename T = void>
  T* get() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace kcast::microbench
