#include "model/conv_algo.h"

#include <algorithm>
#include <cctype>

namespace kcast {

namespace {

// Case-insensitive search for a lowercase pattern; no copy of the name, which the kernel-list reader
// passes for every conv row. Returns the position or npos.
size_t find_ci(std::string_view s, std::string_view what) {
  const auto at = std::search(s.begin(), s.end(), what.begin(), what.end(),
                              [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return at == s.end() ? std::string_view::npos : size_t(at - s.begin());
}
bool has(std::string_view s, std::string_view what) { return find_ci(s, what) != std::string_view::npos; }

// A cuBLAS SGEMM kernel (cuDNN's GEMM algorithm calls cuBLAS): maxwell_sgemm_128x64_nn,
// volta_sgemm_..., ampere_sgemm_..., sm80_..._sgemm_...; cuDNN's own kernels say scudnn.
bool is_cublas_sgemm(std::string_view s) {
  const size_t at = find_ci(s, "_sgemm_");
  if (at == std::string_view::npos || has(s, "cudnn") || has(s, "convolve")) return false;
  for (std::string_view arch : {"maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "sm"})
    if (find_ci(s.substr(0, at), arch) == 0) return true;
  return false;
}

}  // namespace

ConvAlgo conv_algo_of(std::string_view name) {
  if (has(name, "winograd")) return ConvAlgo::winograd;
  if (has(name, "fft") || has(name, "gcgemm")) return ConvAlgo::fft;  // cuDNN FFT: complex GEMMs between transforms
  if (has(name, "implicit_convolve_sgemm") || has(name, "explicit_convolve_sgemm")) return ConvAlgo::legacy;
  if (is_cublas_sgemm(name)) return ConvAlgo::gemm;
  // cuDNN's own implicit-GEMM kernels (precomputed_convolve_sgemm is the pre-Volta one).
  if (has(name, "scudnn") || has(name, "implicit_gemm") || has(name, "fprop") || has(name, "convolve"))
    return ConvAlgo::implicit;
  return ConvAlgo::unknown;
}

}  // namespace kcast
