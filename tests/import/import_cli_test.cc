// End-to-end tests of `kcast import` (the binary at KCAST_BINARY) and of format detection and the
// kcast-csv pass-through.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

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

// A trace whose rows are not in start order is still written in start order (read again and sorted).
TEST_F(ImportCli, RowsOutOfStartOrderAreWrittenSorted) {
  std::string text = read_file(fixture("nsys_cuda_gpu_trace.csv"));
  const size_t third = text.find("507010000,"), fourth = text.find("507120000,");
  ASSERT_NE(third, std::string::npos);
  ASSERT_NE(fourth, std::string::npos);
  const std::string row3 = text.substr(third, fourth - third);
  text.erase(third, row3.size());
  text += row3;  // the third row last: its start now comes after later rows
  const std::string in = dir_ + "/shuffled.csv";
  std::ofstream(in, std::ios::binary) << text;
  const CliResult r = kcast("import " + in + " --from nsys-csv", dir_);
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto ks = parse_kernel_list(r.out, "stdout", {});
  ASSERT_EQ(ks.size(), 7u);
  for (size_t i = 1; i < ks.size(); ++i) EXPECT_LT(ks[i - 1].start_us, ks[i].start_us) << i;
  EXPECT_EQ(r.out, kcast("import " + fixture("nsys_cuda_gpu_trace.csv"), dir_).out);
}

// Into a file the text streams out while read; a trace found out of start order on the way is read
// again and sorted, the partial text discarded (no temporary left), its warnings said once.
TEST_F(ImportCli, RowsOutOfStartOrderIntoAFileAreWrittenSorted) {
  std::string text = read_file(fixture("nsys_cuda_gpu_trace.csv"));
  const size_t third = text.find("507010000,"), fourth = text.find("507120000,");
  const std::string row3 = text.substr(third, fourth - third);
  text.erase(third, row3.size());
  text += row3;
  const std::string in = dir_ + "/shuffled.csv", out = dir_ + "/k.csv", sorted = dir_ + "/sorted.csv";
  std::ofstream(in, std::ios::binary) << text;
  { std::ofstream(out) << "sentinel\n"; }
  CliResult r = kcast("import " + in + " --from nsys-csv -o " + out, dir_);
  ASSERT_EQ(r.rc, 0) << r.err;
  ASSERT_EQ(kcast("import " + fixture("nsys_cuda_gpu_trace.csv") + " -o " + sorted, dir_).rc, 0);
  EXPECT_EQ(read_file(out), read_file(sorted));
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.path().filename().string().starts_with("k.csv");
  EXPECT_EQ(files, 1u);
  r = kcast("import " + fixture("kineto_legacy.json") + " -o " + out, dir_);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err.rfind("kcast: warning: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("kcast: warning: ", 1), std::string::npos) << r.err;
  EXPECT_EQ(read_file(out), kcast("import " + fixture("kineto_legacy.json"), dir_).out);
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
  // Said once, though this trace (out of start order) is read twice.
  EXPECT_EQ(r.err.find("kcast: warning: ", 1), std::string::npos) << r.err;
  r = kcast("import " + fixture("kineto_trace.json") + " --nvtx a --profiler-step 1", dir_);
  EXPECT_EQ(r.rc, 2);
  r = kcast("import --help", dir_);
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("--aggregate"), std::string::npos);
}

}  // namespace
}  // namespace kcast

namespace kcast {
namespace {

Kernel timed(const std::string& name, double start) {
  Kernel k;
  k.name = name;
  k.cls = KernelClass::elementwise;
  k.bytes = 4096;
  k.duration_us = 2.5;
  k.start_us = start;
  k.gpu = "A100-SXM4-80GB";
  return k;
}

std::string text_of(const KernelListText& t) {
  std::ostringstream o;
  t.write(o);
  return o.str();
}

// `kcast import` without --aggregate writes the rows as formatted while read (KernelListText); that
// text must be the kernel list write_kernel_list gives for the collected, sorted rows.
TEST(KernelListText, RowsInStartOrderGiveTheTextOfTheCollectedList) {
  KernelListText text;
  KernelCollector all;
  auto part = text.make_part();
  for (int i = 0; i < 5000; ++i) {
    Kernel k = timed(i % 2 ? "a, \"quoted\" name" : "plain", i * 10.0);
    all.add(Kernel(k));
    (i < 3000 ? static_cast<KernelSink&>(text) : *part).add(std::move(k));
  }
  text.merge(std::move(*part));
  ASSERT_TRUE(text.in_start_order());
  EXPECT_EQ(text.rows(), 5000u);
  std::ostringstream expected;
  write_kernel_list(all.take(), expected);
  EXPECT_EQ(text_of(text), expected.str());
}

// Streaming, the same text goes out as it completes (blocks of 1 MiB, parts as merged), and a row out of
// start order stops the read at once.
TEST(KernelListText, StreamingWritesTheSameTextAndStopsAtARowOutOfOrder) {
  KernelListText held;
  std::ostringstream streamed;
  KernelListText stream(&streamed);
  auto held_part = held.make_part(), stream_part = stream.make_part();
  for (int i = 0; i < 40000; ++i) {  // ~3 MB of rows: several blocks
    Kernel k = timed(std::string(40, char('a' + i % 26)), i * 10.0);
    if (i < 25000) {
      held.add(Kernel(k));
      stream.add(std::move(k));
    } else {
      held_part->add(Kernel(k));
      stream_part->add(std::move(k));
    }
  }
  held.merge(std::move(*held_part));
  stream.merge(std::move(*stream_part));
  stream.finish();
  EXPECT_EQ(streamed.str(), text_of(held));
  std::ostringstream empty_out;
  KernelListText empty(&empty_out);
  empty.finish();
  EXPECT_EQ(empty_out.str(), text_of(KernelListText()));  // the header alone

  std::ostringstream cut;
  KernelListText late(&cut);
  late.add(timed("a", 10));
  EXPECT_THROW(late.add(timed("b", 5)), KernelListText::OutOfStartOrder);
  KernelListText across(&cut);
  across.add(timed("a", 10));
  auto part = across.make_part();
  part->add(timed("b", 7));
  EXPECT_THROW(across.merge(std::move(*part)), KernelListText::OutOfStartOrder);
}

TEST(KernelListText, RowsOutOfStartOrderAreFlaggedWithinAndAcrossParts) {
  KernelListText within;
  within.add(timed("a", 10));
  within.add(timed("b", 5));
  EXPECT_FALSE(within.in_start_order());

  KernelListText across;
  across.add(timed("a", 10));
  auto part = across.make_part();
  part->add(timed("b", 7));
  part->add(timed("c", 20));
  across.merge(std::move(*part));
  EXPECT_FALSE(across.in_start_order());

  KernelListText unknown_last;  // rows without a start sort last, as the collector puts them
  unknown_last.add(timed("a", 10));
  unknown_last.add(timed("b", kUnknown));
  EXPECT_TRUE(unknown_last.in_start_order());
  unknown_last.add(timed("c", 30));
  EXPECT_FALSE(unknown_last.in_start_order());
}

}  // namespace
}  // namespace kcast
