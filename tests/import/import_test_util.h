// Helpers for the importer tests: fixture paths, capturing warnings, reading a fixture through one
// reader into a start-ordered list, and checking that an InputError names the expected place.
#pragma once
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "model/error.h"
#include "predict/import/import.h"

namespace kcast::testing_import {

inline std::string fixture(const std::string& name) {
  return std::string(KCAST_TEST_DATA) + "/import/" + name;
}

struct Captured {
  std::vector<std::string> warnings;
  ImportOptions opt;
  Captured() {
    opt.warn = [this](const std::string& w) { warnings.push_back(w); };
  }
};

inline double total_us(const std::vector<Kernel>& ks) {
  double s = 0;
  for (const Kernel& k : ks) s += k.duration_us * k.count;
  return s;
}

// Runs `f`, expects an InputError whose message contains every piece of `parts`.
template <class F>
void expect_input_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message is not one line: " << msg;
  }
}

}  // namespace kcast::testing_import
