// End-to-end tests of `kcast import` (the binary at KCAST_BINARY) and of format detection and the
// kcast-csv pass-through.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "io/atomic_file.h"
#include "io/kernel_list_csv.h"
#include "tests/import/import_test_util.h"

namespace kcast {
namespace {

using namespace testing_import;
namespace fs = std::filesystem;

struct CliResult {
  int rc;
  std::string out, err;
};

CliResult kcast(const std::string& args, const std::string& dir) {
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  const std::string cmd = std::string(KCAST_BINARY) + " " + args + " >" + out + " 2>" + err;
  int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
}

class ImportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("kcast_import_cli_" + std::to_string(::getpid()))).string();
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ImportCli, WritesKernelListThatReadsBack) {
  const std::string out = dir_ + "/k.csv";
  CliResult r = kcast("import " + fixture("nsys_cuda_gpu_trace.csv") + " -o " + out, dir_);
  ASSERT_EQ(r.rc, 0) << r.err;
  KernelListOptions ko;
  auto ks = read_kernel_list(out, ko);
  ASSERT_EQ(ks.size(), 7u);
  EXPECT_NEAR(total_us(ks), 219.812, 1e-9);
  EXPECT_EQ(ks[2].gpu, "A100-SXM4-40GB");
  r = kcast("import " + fixture("kineto_trace.json") + " --aggregate --profiler-step 1", dir_);
  ASSERT_EQ(r.rc, 0) << r.err;
  auto agg = parse_kernel_list(r.out, "stdout", ko);
  EXPECT_EQ(agg.size(), 3u);
}

TEST_F(ImportCli, FailureLeavesExistingOutputUntouched) {
  const std::string out = dir_ + "/k.csv";
  { std::ofstream(out) << "sentinel\n"; }
  CliResult r = kcast("import " + fixture("nsys_bad_number.csv") + " -o " + out, dir_);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.rfind("kcast: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("nsys_bad_number.csv:3: column 'Duration (ns)'"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(out), "sentinel\n");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.path().filename().string().starts_with("k.csv");
  EXPECT_EQ(files, 1u);  // no temporary left behind
}

TEST_F(ImportCli, UsageErrorsAndWarnings) {
  CliResult r = kcast("import " + fixture("nsys_cuda_gpu_trace.csv") + " --from nsys-xml", dir_);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--from"), std::string::npos) << r.err;
  const std::string junk = dir_ + "/junk.txt";
  { std::ofstream(junk) << "hello world\nno trace here\n"; }
  r = kcast("import " + junk, dir_);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find(junk + ": unrecognized trace format"), std::string::npos) << r.err;
  r = kcast("import " + fixture("kineto_legacy.json"), dir_);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err.rfind("kcast: warning: ", 0), 0u) << r.err;
  r = kcast("import " + fixture("kineto_trace.json") + " --nvtx a --profiler-step 1", dir_);
  EXPECT_EQ(r.rc, 2);
  r = kcast("import --help", dir_);
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("--aggregate"), std::string::npos);
}

}  // namespace
}  // namespace kcast
