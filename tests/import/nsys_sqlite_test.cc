// Tests of the Nsight Systems SQLite reader (predict/import/nsys_sqlite.cc). The fixture databases
// are built at test time from the SQL text in tests/data/import/*.sql (no binary in the tree).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "io/atomic_file.h"
#include "tests/import/import_test_util.h"

namespace kcast {
namespace {

using namespace testing_import;

// Builds a fresh SQLite file from fixture SQL; removed at the end of the test.
class SqlFixture {
 public:
  SqlFixture(const std::string& sql_file, const std::string& tag) {
    path_ = (std::filesystem::temp_directory_path() /
             ("kcast_nsys_" + std::to_string(::getpid()) + "_" + tag + ".sqlite")).string();
    std::remove(path_.c_str());
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    const std::string sql = read_file(fixture(sql_file));
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }
  ~SqlFixture() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<Kernel> read(const std::string& path, const ImportOptions& opt, bool aggregate = false) {
  return import_trace(path, TraceFormat::automatic, opt, aggregate);
}

TEST(NsysSqlite, ReadsKernelsCopiesSetsInStartOrder) {
  SqlFixture db("nsys_trace.sql", "all");
  EXPECT_EQ(detect_format(db.path()), TraceFormat::nsys_sqlite);
  Captured c;
  auto ks = read(db.path(), c.opt);
  ASSERT_EQ(ks.size(), 9u);
  EXPECT_NEAR(total_us(ks), 135.0, 1e-9);
  EXPECT_TRUE(c.warnings.empty());
  for (size_t i = 1; i < ks.size(); ++i) EXPECT_LE(ks[i - 1].start_us, ks[i].start_us);
  for (const Kernel& k : ks) EXPECT_EQ(k.gpu, "H100-SXM");
  EXPECT_EQ(ks[0].name, "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(ks[0].cls, KernelClass::memcpy);
  EXPECT_DOUBLE_EQ(ks[0].bytes, 16777216);
  EXPECT_DOUBLE_EQ(ks[0].duration_us, 10);
  EXPECT_EQ(ks[1].name, "[CUDA memset]");
  EXPECT_EQ(ks[1].cls, KernelClass::memset);
  EXPECT_DOUBLE_EQ(ks[1].bytes, 1048576);
  // demangledName wins over shortName.
  EXPECT_EQ(ks[2].name.rfind("void at::native::vectorized_elementwise_kernel<4", 0), 0u) << ks[2].name;
  EXPECT_EQ(ks[2].cls, KernelClass::elementwise);
  const Kernel& gemm = ks[3];
  EXPECT_EQ(gemm.cls, KernelClass::gemm);
  EXPECT_DOUBLE_EQ(gemm.start_us, 2010);
  EXPECT_DOUBLE_EQ(gemm.duration_us, 50);
  EXPECT_EQ(gemm.grid[0], 8);
  EXPECT_EQ(gemm.grid[1], 16);
  EXPECT_EQ(gemm.block[0], 256);
  EXPECT_EQ(gemm.registers, 232);
  EXPECT_EQ(gemm.shared_bytes, 73728);
  EXPECT_EQ(gemm.stream, 7);
  EXPECT_EQ(gemm.dtype, DType::fp16);
  EXPECT_EQ(ks[2].dtype, DType::fp16);  // FillFunctor<c10::Half>
  EXPECT_EQ(ks[4].cls, KernelClass::softmax);
  EXPECT_EQ(ks[4].dtype, DType::fp16);
  EXPECT_EQ(ks[4].shared_bytes, 16);
  EXPECT_EQ(ks[8].name, "[CUDA memcpy Device-to-Host]");
}

TEST(NsysSqlite, AggregatesIdenticalKernels) {
  SqlFixture db("nsys_trace.sql", "agg");
  Captured c;
  auto ks = read(db.path(), c.opt, true);
  ASSERT_EQ(ks.size(), 6u);
  EXPECT_NEAR(total_us(ks), 135.0, 1e-9);
  EXPECT_EQ(ks[3].cls, KernelClass::gemm);
  EXPECT_DOUBLE_EQ(ks[3].count, 2);
  EXPECT_DOUBLE_EQ(ks[3].duration_us, 49.5);
}

TEST(NsysSqlite, NvtxRangeSelectsKernelsByStart) {
  SqlFixture db("nsys_trace.sql", "nvtx");
  Captured c;
  c.opt.step.nvtx = "train_step";  // first instance: name through textId -> StringIds
  auto ks = read(db.path(), c.opt);
  ASSERT_EQ(ks.size(), 4u);
  EXPECT_NEAR(total_us(ks), 61.5, 1e-9);
  c.opt.step.instance = 2;  // second instance: inline text
  ks = read(db.path(), c.opt);
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_NEAR(total_us(ks), 59.5, 1e-9);
  c.opt.step.instance = 3;
  expect_input_error([&] { read(db.path(), c.opt); }, {db.path(), "'train_step' (instance 3)", "data_load"});
  c.opt.step.instance = 1;
  c.opt.step.nvtx = "nope";
  expect_input_error([&] { read(db.path(), c.opt); }, {db.path(), "no NVTX range 'nope'", "train_step"});
}

TEST(NsysSqlite, OlderSchemaAndBoardVariantByProperties) {
  SqlFixture db("nsys_trace_old.sql", "old");
  Captured c;
  auto ks = read(db.path(), c.opt);
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_NEAR(total_us(ks), 8.0, 1e-9);
  EXPECT_EQ(ks[0].name, "volta_sgemm_128x64_nn");
  EXPECT_EQ(ks[0].dtype, DType::fp32);
  EXPECT_EQ(ks[0].shared_bytes, 16384);
  EXPECT_EQ(ks[2].name, "[CUDA memcpy Device-to-Device]");
  for (const Kernel& k : ks) EXPECT_EQ(k.gpu, "A100-SXM4-40GB");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("by properties"), std::string::npos) << c.warnings[0];
  c.opt.step.nvtx = "x";
  expect_input_error([&] { read(db.path(), c.opt); }, {db.path(), "NVTX_EVENTS"});
}

TEST(NsysSqlite, ParsesBytesAndHonoursGpuOverride) {
  SqlFixture db("nsys_trace.sql", "bytes");
  Captured c;
  c.opt.gpu = "NVIDIA A100-SXM4-80GB";
  KernelCollector out;
  parse_nsys_sqlite(read_file(db.path()), "mem.sqlite", c.opt, out);
  auto ks = out.take();
  ASSERT_EQ(ks.size(), 9u);
  for (const Kernel& k : ks) EXPECT_EQ(k.gpu, "A100-SXM4-80GB");
}

TEST(NsysSqlite, BadInputsAreClearErrors) {
  Captured c;
  expect_input_error(
      [&] { import_trace(fixture("nsys_cuda_gpu_trace.csv"), TraceFormat::nsys_sqlite, c.opt, false); },
      {"nsys_cuda_gpu_trace.csv", "not an SQLite database"});
  SqlFixture other("nsys_trace_old.sql", "nokernel");
  {
    sqlite3* h = nullptr;
    sqlite3_open(other.path().c_str(), &h);
    sqlite3_exec(h, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL", nullptr, nullptr, nullptr);
    sqlite3_close(h);
  }
  expect_input_error([&] { read(other.path(), c.opt); }, {other.path(), "CUPTI_ACTIVITY_KIND_KERNEL not found"});
  SqlFixture db("nsys_trace.sql", "trunc");
  const std::string bytes = read_file(db.path());
  KernelCollector out;
  expect_input_error([&] { parse_nsys_sqlite(bytes.substr(0, 2048), "cut.sqlite", c.opt, out); }, {"cut.sqlite"});
  expect_input_error([&] { parse_nsys_sqlite("", "e.sqlite", c.opt, out); }, {"e.sqlite", "empty"});
}

}  // namespace
}  // namespace kcast
