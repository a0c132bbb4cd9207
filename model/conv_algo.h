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

// cuDNN's CUDA-core Winograd kernels (*_scudnn_winograd_128x128_*_tile<abc>*) compute F(2x2,3x3):
// each CTA takes 32 output tiles of 2x2 (a x b x c = 32 in every variant's name: tile148t, 228n, 244n,
// 418n, 424n, 442t) for 32 output channels, and runs its 16 transformed products as one 128x128 GEMM
// tile over K = input channels (16 x 32 tiles x 32 channels = 128 x 128). The NeuSight corpus shows
// the tiling on all five GPUs: grid CTAs x 4096 >= outputs, with equality (1.00) at the best-fitting
// shapes of every variant (tile148t: grid = batch x ceil(Cout/32), ceil(Ho/8), ceil(Wo/16)).
inline constexpr int kWinogradCtaTile = 128;     // the CTA's transformed-GEMM tile, m and n
inline constexpr int kWinogradTaps = 9;          // 3x3 filter taps per input channel in kcast's k
inline constexpr int kWinogradCtaPixels = 128;   // outputs per channel per CTA: 32 tiles of 2x2
inline constexpr int kWinogradCtaChannels = 32;  // output channels per CTA
// Winograd-nonfused F(4x4,3x3): 6x6 transformed tiles, 36 products, one batched SGEMM over them
// (grid z = 36 in every NeuSight SGEMM convolution, 4976 rows on five GPUs, all 3x3 stride 1).
inline constexpr int kWinogradNonfusedProducts = 36;
// Its separate transform kernels: the input transform reads the activations (one element per output
// position and input channel, stride 1) and writes 36 values per 4x4 tile (2.25 per output); the
// output transform reads 2.25 and writes 1 per output and channel. FP32: 4 x 3.25 bytes.
inline constexpr double kWinogradNonfusedBytes = 4 * 3.25;
// The filter transform reads 9 and writes 36 values per input and output channel pair.
inline constexpr double kWinogradNonfusedFilterBytes = 4 * (9 + 36);

enum class ConvAlgo : uint8_t { implicit, gemm, winograd, fft, legacy, unknown };

ConvAlgo conv_algo_of(std::string_view kernel_name);

}  // namespace kcast
