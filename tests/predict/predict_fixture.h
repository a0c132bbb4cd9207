// Shared helpers of the predict/whatif tests: the default model and database, the mixed_ops.csv
// fixture (real measured kernels; tests/data/predict/make_mixed_ops.py), hand-built kernels, and
// running the kcast binary.
#pragma once
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/classifier_rules.h"
#include "io/gpu_database_csv.h"
#include "io/kernel_list_csv.h"
#include "calibrate/model_file.h"
#include "predict/e2e/predictor.h"

namespace kcast::testing {

inline const GpuDatabase& db() { return default_gpu_database(); }
inline const LoadedModel& model() { return default_model(); }

inline std::string fixture_path() { return std::string(KCAST_TEST_DATA) + "/predict/mixed_ops.csv"; }
inline std::vector<Kernel> fixture() {
  return read_kernel_list(fixture_path(), KernelListOptions{&db(), &default_classifier()});
}

inline Target target(const std::string& name, const LoadedModel& m = model()) {
  const GpuSpec& s = db().resolve(name);
  return Target{s.name, m.caps_for(s)};
}

inline Kernel gemm(int64_t m, int64_t n, int64_t k, DType dt = DType::bf16) {
  Kernel x;
  x.name = "gemm";
  x.cls = KernelClass::gemm;
  x.dtype = dt;
  x.m = m, x.n = n, x.k = k;
  x.derive_from_shape();
  return x;
}

inline Kernel streaming(double bytes, KernelClass c = KernelClass::elementwise) {
  Kernel x;
  x.name = "elementwise";
  x.cls = c;
  x.bytes = bytes;
  return x;
}

inline Kernel measured(Kernel k, double us, const std::string& gpu) {
  k.duration_us = us;
  k.gpu = gpu;
  return k;
}

struct RunResult {
  int rc;
  std::string out;
};
// Runs `kcast ARGS`; stdout (and stderr with `with_stderr`) captured.
inline RunResult run_kcast(const std::string& args, bool with_stderr = false) {
  const std::string cmd = std::string("'") + KCAST_BINARY + "' " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  RunResult r{-1, ""};
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string temp_path(const std::string& name) {
  return (::testing::TempDir().empty() ? std::string("/tmp/") : ::testing::TempDir()) + "kcast_predict_" + name;
}

}  // namespace kcast::testing
