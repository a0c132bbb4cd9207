#include "model/conv_algo.h"

#include "model/ascii_lower.h"

namespace kcast {

namespace {

// A cuBLAS SGEMM kernel (cuDNN's GEMM algorithm calls cuBLAS): maxwell_sgemm_128x64_nn,
// volta_sgemm_..., ampere_sgemm_..., sm80_..._sgemm_...; cuDNN's own kernels say scudnn.
bool is_cublas_sgemm(std::string_view s) {
  const size_t at = find_ci(s, "_sgemm_");
  if (at == std::string_view::npos || contains_ci(s, "cudnn") || contains_ci(s, "convolve")) return false;
  for (std::string_view arch : {"maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "sm"})
    if (starts_with_ci(s.substr(0, at), arch)) return true;
  return false;
}

}  // namespace

ConvAlgo conv_algo_of(std::string_view name) {
  if (contains_ci(name, "winograd")) return ConvAlgo::winograd;
  // cuDNN FFT: complex GEMMs between transforms.
  if (contains_ci(name, "fft") || contains_ci(name, "gcgemm")) return ConvAlgo::fft;
  if (contains_ci(name, "implicit_convolve_sgemm") || contains_ci(name, "explicit_convolve_sgemm"))
    return ConvAlgo::legacy;
  if (is_cublas_sgemm(name)) return ConvAlgo::gemm;
  // cuDNN's own implicit-GEMM kernels (precomputed_convolve_sgemm is the pre-Volta one).
  if (contains_ci(name, "scudnn") || contains_ci(name, "implicit_gemm") || contains_ci(name, "fprop") ||
      contains_ci(name, "convolve"))
    return ConvAlgo::implicit;
  return ConvAlgo::unknown;
}

}  // namespace kcast
