// SgemmTile: the tile a cuBLAS SIMT SGEMM kernel ran with, read from its name. cuBLAS names these
// kernels <family>_sgemm_<A>x<B>[_sliced1x4]_<layout> (maxwell_sgemm_128x64_nn, volta_sgemm_64x32_
// sliced1x4_tn, ampere_sgemm_32x128_tn); A tiles the output along kcast's n and B along m (the
// recorded launch grids of the NeuSight corpus show it: grid = ceil(n/A) x ceil(m/B)). The family
// says which architectures run that kernel (data/archs.csv `sgemm_families`): a tile the library
// chose on one architecture says nothing about what it chooses on another.
#pragma once
#include <cstdint>
#include <string_view>

namespace kcast {

// Kernel families cuBLAS ships SIMT SGEMMs under; bit i of ArchFacts::sgemm_families = family i.
enum class SgemmFamily : uint8_t { none, maxwell, volta, turing, ampere };

struct SgemmTile {
  int32_t m = 0, n = 0;  // kcast orientation; 0 = no tile in the name
  SgemmFamily family = SgemmFamily::none;
  bool known() const { return m > 0 && n > 0; }
};

SgemmTile sgemm_tile_of(std::string_view kernel_name);
// "maxwell" -> SgemmFamily::maxwell, case-sensitive as cuBLAS spells it; none if unknown.
SgemmFamily sgemm_family_named(std::string_view family);

}  // namespace kcast
