#include "model/conv_algo.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace kcast {

namespace {

bool has(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

// A cuBLAS SGEMM kernel (cuDNN's GEMM algorithm calls cuBLAS): maxwell_sgemm_128x64_nn,
// volta_sgemm_..., ampere_sgemm_..., sm80_..._sgemm_...; cuDNN's own kernels say scudnn.
bool is_cublas_sgemm(const std::string& s) {
  const size_t at = s.find("_sgemm_");
  if (at == std::string::npos || has(s, "cudnn") || has(s, "convolve")) return false;
  const std::string_view head(s.data(), at);
  for (std::string_view arch : {"maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "sm"})
    if (head.rfind(arch, 0) == 0) return true;
  return false;
}

}  // namespace

ConvAlgo conv_algo_of(std::string_view kernel_name) {
  std::string s(kernel_name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (has(s, "winograd")) return ConvAlgo::winograd;
  if (has(s, "fft") || has(s, "gcgemm")) return ConvAlgo::fft;  // cuDNN FFT: complex GEMMs between transforms
  if (has(s, "implicit_convolve_sgemm") || has(s, "explicit_convolve_sgemm")) return ConvAlgo::legacy;
  if (is_cublas_sgemm(s)) return ConvAlgo::gemm;
  return ConvAlgo::implicit;
}

std::string_view to_string(ConvAlgo a) {
  switch (a) {
    case ConvAlgo::gemm: return "gemm";
    case ConvAlgo::winograd: return "winograd";
    case ConvAlgo::fft: return "fft";
    case ConvAlgo::legacy: return "legacy";
    default: return "implicit";
  }
}

}  // namespace kcast
