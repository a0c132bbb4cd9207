// The recipes' formats (Transformer Engine 2.x, transformer_engine.common.recipe; the OCP
// Microscaling spec for MXFP8's E8M0 scales per 32 values; NVIDIA's NVFP4 format: E2M1 values, an
// E4M3 scale per 16 and an FP32 tensor scale; DeepSeek-V3's 1x128 / 128x128 FP32 block scales).
// The bytes below follow from those formats: nothing here is fitted.
#include "predict/synth/transformer/recipe.h"

#include "model/error.h"

#include <string>

namespace kcast::synth::transformer {

namespace {

// The row-wise and the column-wise copy.
constexpr double kFp8Copies = 1 + 1;
constexpr RecipeKernels kRecipes[] = {
    {Recipe::delayed, "delayed", DType::fp8, "te::cast_transpose (fp8, delayed scaling)", 1, kFp8Copies, 3, false,
     "te::multi_cast_transpose (fp8, delayed scaling)"},
    // Current scaling reads the BF16 tensor twice: its amax first.
    {Recipe::current, "current", DType::fp8, "te::amax|cast_transpose (fp8, current scaling)", 2, kFp8Copies, 4,
     false},
    {Recipe::mxfp8, "mxfp8", DType::fp8, "te::quantize_mxfp8 (rowwise|columnwise)", 1, kFp8Copies + 2.0 / 32, 4, true},
    {Recipe::block, "block", DType::fp8, "te::quantize_fp8_block (1x128|128x128)", 1, kFp8Copies + 2 * 4.0 / 128, 4,
     false},
    // FP4 values are half a byte; the column-wise copy is Hadamard-transformed (16 x 16: 16 FMAs a value).
    {Recipe::nvfp4, "nvfp4", DType::fp4, "te::quantize_nvfp4 (rowwise|columnwise RHT)", 1, 0.5 + 0.5 + 2.0 / 16, 36,
     true},
};

}  // namespace

const RecipeKernels* recipe_kernels(Recipe r) {
  for (const RecipeKernels& k : kRecipes)
    if (k.recipe == r) return &k;
  return nullptr;
}

std::optional<Recipe> parse_recipe(const std::string& name) {
  for (const RecipeKernels& k : kRecipes)
    if (name == k.name) return k.recipe;
  return std::nullopt;
}

const char* to_string(Recipe r) {
  const RecipeKernels* k = recipe_kernels(r);
  return k ? k->name : "none";
}

Recipe recipe_option(const std::string& given, bool train, std::optional<DType> dtype) {
  if (!given.empty()) {
    const std::optional<Recipe> r = parse_recipe(given);
    if (!r) throw InputError("option '--recipe': '" + given + "' is not one of delayed, current, mxfp8, block, nvfp4");
    return *r;
  }
  if (train && dtype == DType::fp8) return Recipe::delayed;  // Transformer Engine's default recipe
  if (train && dtype == DType::fp4) return Recipe::nvfp4;
  return Recipe::none;
}

}  // namespace kcast::synth::transformer
