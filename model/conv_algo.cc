#include "model/conv_algo.h"

#include "model/ascii_lower.h"

namespace kcast {

namespace {

bool has(std::string_view s, std::string_view what) { return contains_ci(s, what); }

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
