#include "model/model_params.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kcast {
namespace {

// kParamInfo is indexed by Param: an entry left out would leave a zero-filled row (no name, zero
// bounds), which model.json I/O and the fit would trip over.
TEST(ModelParams, EveryParameterIsDescribedOnceWithSaneBounds) {
  std::set<std::string> names;
  for (int i = 0; i < kNumParams; ++i) {
    const ParamInfo& p = kParamInfo[i];
    ASSERT_NE(p.name, nullptr) << "parameter " << i;
    ASSERT_NE(p.meaning, nullptr) << p.name;
    EXPECT_TRUE(names.insert(p.name).second) << p.name << " twice";
    EXPECT_LT(p.lower, p.upper) << p.name;
    EXPECT_GE(p.initial, p.lower) << p.name;
    EXPECT_LE(p.initial, p.upper) << p.name;
  }
}

}  // namespace
}  // namespace kcast
