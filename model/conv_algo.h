// ConvAlgo: which cuDNN algorithm family ran a convolution, read from its kernel name. The families
// do different work for the same implicit-GEMM shape, so each runs at its own rate relative to the
// implicit-GEMM family: Winograd and FFT trade multiplications for transforms; `gemm` is a cuBLAS
// SGEMM launched by cuDNN (1x1 and im2col convolutions, and Winograd-nonfused, whose 36 batched GEMMs
// for F(4x4,3x3) show as grid_z = 36 in every NeuSight 3x3 conv of this family); `legacy` is the old
// implicit/explicit_convolve_sgemm kernels, which run slowly; `implicit` is cuDNN's own implicit-GEMM
// kernels (scudnn, xmma fprop). A convolution whose name says none of these (synthesized, an op name,
// a kernel this table does not know) is `unknown`: on tensor cores it runs as implicit GEMM, the
// family every tensor-core convolution belongs to; on CUDA cores at the measured median family rate
// (ModelParams kConvChoiceGain), since FP32 cuDNN picks Winograd or cuBLAS for many shapes.
#pragma once
#include <cstdint>
#include <string_view>

namespace kcast {

enum class ConvAlgo : uint8_t { implicit, gemm, winograd, fft, legacy, unknown };

ConvAlgo conv_algo_of(std::string_view kernel_name);

}  // namespace kcast
