// Helpers of the synth tests: a synthesized row by name, two lists compared row for row, a temporary
// file to hand the config readers (removed by the caller), and a config of the zoo (data/synth/) by
// model name.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model/kernel.h"
#include "predict/synth/transformer_config.h"

namespace kcast::synth::testing {

// A bare row of one launch: a name and a class (the step-parts tests give each its time).
inline Kernel row(const std::string& name, KernelClass cls) {
  Kernel k;
  k.name = name;
  k.cls = cls;
  k.count = 1;
  return k;
}

inline const Kernel* find(const std::vector<Kernel>& ks, const std::string& name) {
  for (const auto& k : ks)
    if (k.name == name) return &k;
  return nullptr;
}

// Sum of count x `field` over the rows whose name contains `has`.
inline double total(const std::vector<Kernel>& ks, const std::string& has, double Kernel::*field) {
  double t = 0;
  for (const auto& k : ks)
    if (k.name.find(has) != std::string::npos) t += k.*field * k.count;
  return t;
}

// Sum of count x bytes over the rows whose name contains `part` (a collective's bus bytes per step).
inline double bus_bytes(const std::vector<Kernel>& ks, const std::string& part) {
  double b = 0;
  for (const auto& k : ks)
    if (k.name.find(part) != std::string::npos) b += k.count * k.bytes;
  return b;
}

// Two kernel lists row for row the same: names, work and counts.
inline void expect_same_rows(const std::vector<Kernel>& a, const std::vector<Kernel>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].flops, b[i].flops) << a[i].name;
    EXPECT_EQ(a[i].bytes, b[i].bytes) << a[i].name;
    EXPECT_EQ(a[i].count, b[i].count) << a[i].name;
  }
}

inline std::string write_temp(const std::string& name, const std::string& text) {
  auto p = std::filesystem::temp_directory_path() / ("kcast_synth_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p.string();
}

// data/synth/<name>.json as `kcast synth <name>` reads it (throws where the zoo lacks it).
inline TransformerConfig test_config(const std::string& name) { return zoo_config(name).value(); }

}  // namespace kcast::synth::testing
