// Low-precision training recipes (synth.h, Recipe): what Transformer Engine runs for a block layer's
// projection in training, and the bytes its quantization kernels move. blocks.cc's linear() emits,
// per projection and micro-batch, the input's quantization and the narrow forward GEMM, and in
// backward the output gradient's quantization and the narrow data- and weight-gradient GEMMs; the
// weights are quantized once per step (TE caches them across micro-batches). Attention, norms,
// embeddings and the output layer stay BF16 (TE's defaults).
#pragma once
#include <optional>

#include "model/dtype.h"
#include "predict/synth/synth.h"

namespace kcast::synth::transformer {

struct RecipeKernels {
  Recipe recipe;
  const char* name;      // as the options spell it
  DType gemm_dtype;      // the GEMMs' operands
  const char* quantize;  // TE's kernel that quantizes a BF16 tensor
  // Times quantizing reads the BF16 tensor: once, twice with current scaling (its amax first).
  double bf16_reads;
  // Bytes per element that quantizing writes, which TE also keeps of a weight between micro-batches:
  // the row-wise copy the forward / data-gradient GEMM reads and the column-wise one the
  // weight-gradient GEMM reads (a transpose on Hopper, a second scaling direction with block scales),
  // and their scales (E8M0 per 32 values, E4M3 per 16, FP32 per 128).
  double stored_bytes_per_elem;
  double flops_per_elem;  // amax, scale and cast; nvfp4 adds the 16-point Hadamard transform
  bool needs_fp4_units;   // block-scaled formats run on Blackwell's tensor cores (the FP4 / MX generation)
  // A grouped projection's (the experts') inputs quantized in one launch: TE's fused_multi_quantize runs
  // nvte_multi_cast_transpose only for delayed scaling with a column-wise copy, and loops nvte_quantize
  // over the tensors otherwise (nullptr: one launch per expert).
  const char* multi_quantize = nullptr;
  // Bytes per element that quantizing a BF16 tensor moves: its reads and what it writes.
  double bytes_per_elem() const { return 2 * bf16_reads + stored_bytes_per_elem; }
};

// The recipe's kernels; nullptr for Recipe::none.
const RecipeKernels* recipe_kernels(Recipe r);
// The recipe a --recipe value names, or nullopt.
std::optional<Recipe> parse_recipe(const std::string& name);
const char* to_string(Recipe r);
// The recipe of a training step: the one `given` names (InputError naming --recipe when it names
// none), else Transformer Engine's default for the dtype (fp8: delayed, fp4: nvfp4), else none.
// Only training steps take a default.
Recipe recipe_option(const std::string& given, bool train, std::optional<DType> dtype);

}  // namespace kcast::synth::transformer
