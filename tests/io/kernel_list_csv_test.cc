#include "io/kernel_list_csv.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "model/error.h"

namespace kcast {
namespace {

std::string error_of_text(const std::string& text, const std::string& file) {
  try {
    parse_kernel_list(text, file, {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
std::string error_of(const std::string& text) { return error_of_text(text, "k.csv"); }

TEST(KernelListCsv, ReadsShapeAndDerivesGemmWork) {
  auto ks = parse_kernel_list(
      "name,class,dtype,batch,m,n,k,duration_us,gpu\n"
      "\"gemm, with comma\",gemm,bf16,2,128,256,64,9.5,X\n", "k.csv", {});
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks[0].name, "gemm, with comma");
  EXPECT_EQ(ks[0].dtype, DType::bf16);
  EXPECT_DOUBLE_EQ(ks[0].flops, 2.0 * 2 * 128 * 256 * 64);
  // A 128x64 + B 64x256 + C 128x256, two batches, 2 bytes each.
  EXPECT_DOUBLE_EQ(ks[0].bytes, 2.0 * (128 * 64 + 64 * 256 + 128 * 256) * 2);
  EXPECT_DOUBLE_EQ(ks[0].duration_us, 9.5);
}

// cuDNN's convolutions that run cuBLAS SGEMMs (1x1, im2col, Winograd-nonfused) record the tile in
// the name as cuBLAS's own GEMMs do; cuDNN's own kernels' tiling is not read from names.
TEST(KernelListCsv, ReadsTheSgemmTileOfGemmAndSgemmConvolutionRows) {
  auto ks = parse_kernel_list(
      "name,class,m,n,k\n"
      "volta_sgemm_128x64_nn,gemm,512,512,512\n"
      "volta_sgemm_128x64_nn,conv,512,512,512\n"
      "cudnn_infer_volta_scudnn_128x64_relu_small_nn_v1,conv,512,512,512\n",
      "k.csv", {});
  ASSERT_EQ(ks.size(), 3u);
  for (int i : {0, 1}) {
    EXPECT_EQ(ks[i].tile.m, 64) << i;  // cuBLAS's B tiles kcast's m (model/sgemm_name.h)
    EXPECT_EQ(ks[i].tile.n, 128) << i;
    EXPECT_EQ(ks[i].tile.family, SgemmFamily::volta) << i;
  }
  EXPECT_EQ(ks[1].conv_algo, ConvAlgo::gemm);
  EXPECT_EQ(ks[2].conv_algo, ConvAlgo::implicit);
  EXPECT_FALSE(ks[2].tile.known());
}

// vLLM's scalar layer kernels keep one element in flight per thread (model/thread_access.h); its
// vectorized fused residual-add norm and a GEMM do not, whatever their names share.
TEST(KernelListCsv, ReadsWhichKernelsKeepOneElementInFlightPerThread) {
  auto ks = parse_kernel_list(
      "name,class,m,n,bytes\n"
      "void vllm::rms_norm_kernel<c10::Half>(c10::Half*),normalization,64,4096,1048576\n"
      "\"void vllm::fused_add_rms_norm_kernel<c10::Half, 8>(c10::Half*)\",normalization,64,4096,2097152\n"
      "void vllm::act_and_mul_kernel<c10::Half>(c10::Half*),elementwise,64,14336,5505024\n"
      "void vllm::rms_norm_kernel<c10::Half>(c10::Half*),gemm,64,4096,1048576\n",
      "k.csv", {});
  ASSERT_EQ(ks.size(), 4u);
  EXPECT_EQ(ks[0].access, ThreadAccess::row_norm);
  EXPECT_EQ(ks[1].access, ThreadAccess::none);
  EXPECT_EQ(ks[2].access, ThreadAccess::gated_activation);
  EXPECT_EQ(ks[3].access, ThreadAccess::none);  // a GEMM row is timed as a GEMM
}

TEST(KernelListCsv, ErrorsNameFileLineAndColumn) {
  EXPECT_NE(error_of("name,duration_us\nk1,1\nk2,abc\n").find("k.csv:3: column 'duration_us'"), std::string::npos);
  EXPECT_NE(error_of("name,duration_us\nk1,-1\n").find("column 'duration_us'"), std::string::npos);
  EXPECT_NE(error_of("name,duration_us\nk1,nan\n").find("column 'duration_us'"), std::string::npos);
  EXPECT_NE(error_of("name,dtype\nk1,fp7\n").find("k.csv:2: column 'dtype': unknown dtype"), std::string::npos);
  EXPECT_NE(error_of("name,class\nk1,gemmm\n").find("unknown class"), std::string::npos);
  EXPECT_NE(error_of("class\ngemm\n").find("missing required column 'name'"), std::string::npos);
  EXPECT_NE(error_of("name,m\n,5\n").find("column 'name'"), std::string::npos);
  EXPECT_NE(error_of("").find("empty file"), std::string::npos);
  EXPECT_NE(error_of("name,l2\nk1,cold\nk2,hot\n").find("k.csv:3: column 'l2': l2 must be 'cold' or 'warm'"),
            std::string::npos);
}

TEST(KernelListCsv, L2ColumnSaysWhetherTheKernelStartedWithACacheOfItsData) {
  auto ks = parse_kernel_list("name,bytes,l2\na,1e6,cold\nb,1e6,warm\nc,1e6,\nd,1e6,Cold\n", "l2.csv", {});
  ASSERT_EQ(ks.size(), 4u);
  EXPECT_TRUE(ks[3].l2_cold);  // as dtype and class: case does not matter
  EXPECT_TRUE(ks[0].l2_cold);
  EXPECT_FALSE(ks[1].l2_cold);
  EXPECT_FALSE(ks[2].l2_cold);  // empty: warm, a kernel inside a workload
}

TEST(KernelListCsv, RoundTripsThroughWriter) {
  Kernel k;
  k.name = "x \"quoted\", name";
  k.cls = KernelClass::softmax;
  k.dtype = DType::fp16;
  k.bytes = 1e6;
  k.grid[0] = 40;
  k.block[0] = 256;
  k.count = 12;
  k.duration_us = 3.25;
  k.gpu = "T4";
  k.start_us = 100.5;
  k.stream = 7;
  k.l2_cold = true;
  std::ostringstream out;
  write_kernel_list({k}, out);
  auto back = parse_kernel_list(out.str(), "rt.csv", {});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, k.name);
  EXPECT_EQ(back[0].cls, KernelClass::softmax);
  EXPECT_EQ(back[0].dtype, DType::fp16);
  EXPECT_DOUBLE_EQ(back[0].bytes, 1e6);
  EXPECT_EQ(back[0].grid[0], 40);
  EXPECT_EQ(back[0].block[0], 256);
  EXPECT_DOUBLE_EQ(back[0].count, 12);
  EXPECT_DOUBLE_EQ(back[0].duration_us, 3.25);
  EXPECT_EQ(back[0].gpu, "T4");
  EXPECT_DOUBLE_EQ(back[0].start_us, 100.5);
  EXPECT_EQ(back[0].stream, 7);
  EXPECT_TRUE(back[0].l2_cold);
}

// A file is read with room reserved for the rows its first 64 KiB promise; a file whose later rows
// are far longer (or that has no final newline) still yields every row, in order.
TEST(KernelListCsv, FileRowsAreAllReadWhateverTheirLengthsPromise) {
  const std::string path = ::testing::TempDir() + "kcast_rows_of_two_lengths.csv";
  {
    std::ofstream f(path, std::ios::binary);
    f << "name,class,bytes,duration_us\n";
    for (int i = 0; i < 5000; ++i) f << "a" << i << ",elementwise,8," << i << "\n";
    for (int i = 0; i < 300; ++i) f << std::string(2000, 'b') << i << ",elementwise,8,1\n";
    f << "last,elementwise,8,2";  // no final newline
  }
  const std::vector<Kernel> ks = read_kernel_list(path, {});
  ASSERT_EQ(ks.size(), 5301u);
  EXPECT_EQ(ks[4999].name, "a4999");
  EXPECT_DOUBLE_EQ(ks[4999].duration_us, 4999);
  EXPECT_EQ(ks[5299].name, std::string(2000, 'b') + "299");
  EXPECT_EQ(ks.back().name, "last");
  std::remove(path.c_str());
}

// A list of tens of MB is read in chunks on several threads (kernel_list_csv.cc, read_in_chunks);
// what comes out must be what one reader streaming the same text gives: every row, in file order.
std::string big_list(size_t rows, size_t bad_row = size_t(-1), size_t second_bad_row = size_t(-1)) {
  std::string text = "name,class,dtype,m,n,k,bytes,duration_us,gpu,start_us,stream\r\n";
  for (size_t i = 0; i < rows; ++i) {
    if (i % 3 == 0) text += "\"gemm<" + std::to_string(i % 7) + ", 128>\",gemm,bf16,256,512," + std::to_string(64 + i % 5) + ",,";
    else text += "elementwise_kernel_with_a_long_templated_name_" + std::to_string(i % 11) + ",elementwise,,,,," + std::to_string(4096 + i) + ",";
    text += i == bad_row || i == second_bad_row ? "fast" : std::to_string(1 + i % 13) + "." + std::to_string(i % 10);
    text += ",A100-SXM4-80GB," + std::to_string(i * 3) + "," + std::to_string(7 + i % 2) + (i % 2 ? "\r\n" : "\n");
  }
  return text;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(KernelListCsv, LargeFilesReadInParallelChunksGiveTheRowsOneReaderGives) {
  const std::string text = big_list(220000);  // ~19 MB
  ASSERT_GT(text.size(), size_t(16) << 20);  // two chunks of at least 8 MiB
  const std::string path = write_temp("kcast_big_list.csv", text);
  const std::vector<Kernel> chunked = read_kernel_list(path, {});
  const std::vector<Kernel> streamed = parse_kernel_list(text, path, {});
  ASSERT_EQ(chunked.size(), 220000u);
  ASSERT_EQ(streamed.size(), chunked.size());
  for (size_t i = 0; i < chunked.size(); ++i) {
    ASSERT_EQ(chunked[i].name, streamed[i].name) << "row " << i;
    ASSERT_EQ(chunked[i].start_us, double(i * 3)) << "row " << i;
    ASSERT_EQ(chunked[i].duration_us, streamed[i].duration_us) << "row " << i;
    ASSERT_EQ(chunked[i].bytes, streamed[i].bytes) << "row " << i;
    ASSERT_EQ(chunked[i].stream, streamed[i].stream) << "row " << i;
  }
  EXPECT_EQ(chunked[3].name, "gemm<3, 128>");
  std::remove(path.c_str());
}

// The table (what predict reads a trace as) holds the same rows: each row's count, duration, start and
// stream its own, every other field its kind's; kinds come in the order of their first rows. A large
// file (read in chunks) shares one kind among the rows that launched the same kernel; a small one
// keeps each row its own.
void expect_table_matches_rows(const KernelTable& t, const std::vector<Kernel>& rows) {
  ASSERT_EQ(t.rows.size(), rows.size());
  const KernelRows view(t);
  std::vector<std::string> seen;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Kernel k = view.row(r);
    ASSERT_EQ(k.name, rows[r].name) << "row " << r;
    ASSERT_EQ(k.cls, rows[r].cls) << "row " << r;
    ASSERT_EQ(k.gpu, rows[r].gpu) << "row " << r;
    ASSERT_EQ(k.k, rows[r].k) << "row " << r;
    ASSERT_EQ(k.bytes, rows[r].bytes) << "row " << r;  // NaN where not given: compare known-ness too
    ASSERT_EQ(known(k.duration_us), known(rows[r].duration_us)) << "row " << r;
    if (known(k.duration_us)) {
      ASSERT_EQ(k.duration_us, rows[r].duration_us) << "row " << r;
    }
    ASSERT_EQ(k.start_us, rows[r].start_us) << "row " << r;
    ASSERT_EQ(k.stream, rows[r].stream) << "row " << r;
    if (view.kind_of(r) == seen.size()) seen.push_back(k.name);  // a new kind: the next in order
    ASSERT_LT(view.kind_of(r), seen.size()) << "row " << r;
  }
  EXPECT_EQ(t.kinds.size(), seen.size());
}

TEST(KernelListCsv, TablesHoldEachDistinctKernelOnceAndEveryRowsOwnTimes) {
  const std::string text = big_list(220000);
  const std::string path = write_temp("kcast_big_table_list.csv", text);
  const KernelTable chunked = read_kernel_table(path, {});
  expect_table_matches_rows(chunked, parse_kernel_list(text, path, {}));
  // big_list launches 7 GEMM names x 5 shapes (i % 3 == 0 rows) and 11 element-wise names with a
  // distinct byte count per row: 35 GEMM kinds, and the element-wise rows are each their own kind.
  EXPECT_EQ(chunked.kinds.size(), 35u + (220000u - 73334u));
  std::remove(path.c_str());
  const std::string small = big_list(300);
  const std::string small_path = write_temp("kcast_small_table_list.csv", small);
  const KernelTable whole = read_kernel_table(small_path, {});
  expect_table_matches_rows(whole, parse_kernel_list(small, small_path, {}));
  std::remove(small_path.c_str());
}

std::string read_error(const std::string& path) {
  try {
    read_kernel_list(path, {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The first bad row of the file is the one named, with its line, wherever the chunks fall.
TEST(KernelListCsv, ErrorsInALargeFileNameTheFirstBadRowsLine) {
  for (size_t bad : {size_t(150), size_t(180000)}) {
    const std::string text = big_list(220000, bad, 200000);
    const std::string path = write_temp("kcast_big_bad_list.csv", text);
    const std::string msg = read_error(path);
    EXPECT_NE(msg.find(":" + std::to_string(bad + 2) + ": column 'duration_us'"), std::string::npos) << msg;
    EXPECT_EQ(msg, error_of_text(text, path));
    std::remove(path.c_str());
  }
}

// Every line of a chunk holds a row (each chunk parses into slots counted from its lines): a blank
// line is the parser's error, named as one reader names it, wherever it falls.
TEST(KernelListCsv, BlankLinesInALargeFileFailAsOneReaderFails) {
  for (size_t blank_after : {size_t(40), size_t(190000)}) {
    std::string text = big_list(220000);
    size_t at = 0;
    for (size_t line = 0; line <= blank_after; ++line) at = text.find('\n', at) + 1;
    text.insert(at, "\n");
    const std::string path = write_temp("kcast_big_blank_list.csv", text);
    const std::string msg = read_error(path);
    EXPECT_NE(msg.find("line " + std::to_string(blank_after + 2)), std::string::npos) << msg;
    EXPECT_EQ(msg, error_of_text(text, path));
    std::remove(path.c_str());
  }
}

}  // namespace
}  // namespace kcast

// A misspelt column loses its values without a word unless the reader says so (#42): one warning per
// near miss, naming the known column; unrelated extra columns stay silent, as the format allows.
TEST(KernelListCsv, NearMissColumnsWarnNamingTheKnownColumn) {
  const auto w = kcast::near_miss_columns("name,duration,Duration_us,dtype ,my_notes,gpu\r", "k.csv");
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NE(w[0].find("k.csv:1: column 'duration' is not a kernel-list column and is ignored; did you mean "
                      "'duration_us'?"),
            std::string::npos);
  EXPECT_NE(w[1].find("'Duration_us'"), std::string::npos);
  EXPECT_NE(w[1].find("did you mean 'duration_us'"), std::string::npos);
  EXPECT_NE(w[2].find("column 'dtype ' is read as 'dtype'"), std::string::npos);
  EXPECT_TRUE(kcast::near_miss_columns("name,class,dtype,m,n,k,duration_us,gpu,notes", "k.csv").empty());
  // Through the reader: the warnings reach the caller, and the misspelt column's values are not read.
  std::vector<std::string> warnings;
  kcast::KernelListOptions opt;
  opt.warnings = &warnings;
  const auto rows = kcast::parse_kernel_list("name,duration\nk,26.5\n", "k.csv", opt);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("did you mean 'duration_us'"), std::string::npos);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(kcast::known(rows[0].duration_us));
}
