// `kcast serve` through the binary: bad input is one line naming the option or file and line, exit 2,
// and leaves an existing output file alone; with several GPUs one the model does not fit is skipped
// with its reason.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;

const char* kLoad = " --input-tokens 256 --output-tokens 16 --concurrency 2 --requests 8";

TEST(ServeCli, BadInputIsOneLineNamingItAndKeepsTheOutputFile) {
  const std::string out = temp_path("serve_keep.csv");
  std::ofstream(out) << "precious\n";
  RunResult r = run_kcast(std::string("serve llama3-8b --gpu H100-SXM --tp 3 --per-request '") + out + "'" + kLoad, true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("'--tp'"), std::string::npos) << r.out;
  std::ifstream in(out);
  std::stringstream kept;
  kept << in.rdbuf();
  EXPECT_EQ(kept.str(), "precious\n");

  const std::string ds = temp_path("serve_bad.csv");
  std::ofstream(ds) << "input_tokens,output_tokens\n10,2\n0,3\n";
  r = run_kcast("serve llama3-8b --gpu H100-SXM --concurrency 1 --dataset '" + ds + "'", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("serve_bad.csv:3"), std::string::npos) << r.out;

  r = run_kcast(std::string("serve llama3-70b --gpu L4") + kLoad, true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("does not fit on L4"), std::string::npos) << r.out;
}

TEST(ServeCli, AGpuTheModelDoesNotFitIsSkippedAmongSeveral) {
  const RunResult r = run_kcast(std::string("serve llama3-8b --gpu K80,H100-SXM --format csv") + kLoad, true);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("K80 skipped: serve: llama3-8b does not fit on K80"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nH100-SXM,concurrency,2,"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kcast
