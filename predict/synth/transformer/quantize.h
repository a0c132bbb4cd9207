// Quantized serving (`--dtype fp8` / `fp4`, inference): the kernels a serving stack runs for a
// projection whose weights are stored narrow, and what quantizing its BF16 input costs. blocks.cc's
// linear() uses them for the repeated block's projections; embeddings and heads stay BF16.
#pragma once
#include <string>

#include "model/dtype.h"
#include "model/kernel.h"

namespace kcast::synth::transformer {

struct QuantKernels {
  DType dtype;
  const char* quantize;  // the activation's quantization kernel
  const char* gemm;      // the scaled GEMM (BF16 C)
  const char* grouped;   // the mixture's grouped expert GEMM
  // Bytes per input element the quantization moves: FP8 reads the BF16 row twice (amax, then scale
  // and cast) and writes FP8; FP4 finds each 16-value block's scale in registers: one read, the 4-bit
  // values and their 8-bit block scales written.
  double bytes_per_elem;
  double bytes_per_row;  // FP8's one FP32 scale per token
};

extern const QuantKernels kFp8Kernels;
extern const QuantKernels kFp4Kernels;

// The quantization of a [rows, width] BF16 input (`what` appended to its name).
Kernel quantize_input(const QuantKernels& q, const std::string& name, double rows, double width,
                      const std::string& what = "");

}  // namespace kcast::synth::transformer
