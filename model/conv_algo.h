// ConvAlgo: which cuDNN algorithm family ran a convolution, read from its kernel name. The families
// do different work for the same implicit-GEMM shape, so each runs at its own rate relative to the
// implicit-GEMM family: Winograd and FFT trade multiplications for transforms; `gemm` is a cuBLAS
// SGEMM launched by cuDNN (1x1 and im2col convolutions, and Winograd-nonfused, whose 36 batched GEMMs
// for F(4x4,3x3) show as grid_z = 36 in every NeuSight 3x3 conv of this family); `legacy` is the old
// implicit/explicit_convolve_sgemm kernels, which run slowly. A convolution without a recognisable
// name (synthesized, or a kernel name this table does not know) is taken as implicit GEMM, the family
// every tensor-core convolution belongs to.
#pragma once
#include <cstdint>
#include <string_view>

namespace kcast {

enum class ConvAlgo : uint8_t { implicit, gemm, winograd, fft, legacy };

ConvAlgo conv_algo_of(std::string_view kernel_name);

}  // namespace kcast
