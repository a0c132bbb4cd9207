// Tests of the PyTorch profiler / Kineto Chrome-trace reader (predict/import/kineto_json.cc).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>

#include "io/atomic_file.h"
#include "tests/import/import_test_util.h"

namespace kcast {
namespace {

using namespace testing_import;

std::vector<Kernel> read(const std::string& path, const ImportOptions& opt, bool aggregate = false) {
  return import_trace(path, TraceFormat::automatic, opt, aggregate);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("kcast_kineto_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string gzip_file(const std::string& text, const std::string& name) {
  const std::string path = temp_path(name);
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), unsigned(text.size()));
  gzclose(f);
  return path;
}

const Kernel* find(const std::vector<Kernel>& ks, std::string_view prefix) {
  for (const Kernel& k : ks)
    if (k.name.starts_with(prefix)) return &k;
  return nullptr;
}

TEST(KinetoJson, ReadsKernelsCopiesSetsWithDeviceAndLaunchShape) {
  Captured c;
  auto ks = read(fixture("kineto_trace.json"), c.opt);
  ASSERT_EQ(ks.size(), 6u);
  EXPECT_NEAR(total_us(ks), 67.0, 1e-9);
  EXPECT_TRUE(c.warnings.empty());
  for (const Kernel& k : ks) EXPECT_EQ(k.gpu, "A100-SXM4-40GB");
  const Kernel& conv = ks[0];
  EXPECT_EQ(conv.cls, KernelClass::conv);
  EXPECT_DOUBLE_EQ(conv.start_us, 1200.0);
  EXPECT_EQ(conv.grid[0], 196);
  EXPECT_EQ(conv.block[0], 128);
  EXPECT_EQ(conv.registers, 168);
  EXPECT_EQ(conv.shared_bytes, 49152);
  EXPECT_EQ(conv.stream, 7);
  const Kernel* copy = find(ks, "Memcpy HtoD");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->cls, KernelClass::memcpy);
  EXPECT_DOUBLE_EQ(copy->bytes, 602112);
  const Kernel* set = find(ks, "Memset (Device)");
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->cls, KernelClass::memset);
  EXPECT_DOUBLE_EQ(set->bytes, 4096);
}

TEST(KinetoJson, AttachesGemmShapesAndDtypesFromCpuOps) {
  Captured c;
  auto ks = read(fixture("kineto_trace.json"), c.opt);
  // aten::convolution input [1,3,224,224], weight [64,3,7,7], stride 2, padding 3:
  // Ho = Wo = (224 + 6 - 6 - 1) / 2 + 1 = 112 -> m = 12544, n = 64, k = 3*7*7 = 147.
  const Kernel& conv = ks[0];
  EXPECT_EQ(conv.m, 12544);
  EXPECT_EQ(conv.n, 64);
  EXPECT_EQ(conv.k, 147);
  EXPECT_EQ(conv.dtype, DType::tf32);  // float operands, tf32f32 kernel: TF32 tensor cores
  EXPECT_DOUBLE_EQ(conv.flops, 2.0 * 12544 * 64 * 147);
  // aten::addmm(bias[1000], a[1,2048], b[2048,1000]).
  const Kernel* sgemm = find(ks, "ampere_sgemm_32x32");
  ASSERT_NE(sgemm, nullptr);
  EXPECT_EQ(sgemm->cls, KernelClass::gemm);
  EXPECT_EQ(sgemm->m, 1);
  EXPECT_EQ(sgemm->n, 1000);
  EXPECT_EQ(sgemm->k, 2048);
  EXPECT_EQ(sgemm->dtype, DType::fp32);
  // aten::mm([128,1024] x [1024,512]) in c10::Half, linked through the runtime call only.
  const Kernel* hgemm = find(ks, "ampere_fp16_s16816gemm");
  ASSERT_NE(hgemm, nullptr);
  EXPECT_EQ(hgemm->m, 128);
  EXPECT_EQ(hgemm->n, 512);
  EXPECT_EQ(hgemm->k, 1024);
  EXPECT_EQ(hgemm->dtype, DType::fp16);
  // The add kernel gets its op's dtype but no GEMM shape.
  const Kernel* add = find(ks, "void at::native::vectorized_elementwise_kernel");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->dtype, DType::fp16);
  EXPECT_FALSE(add->has_shape());
}

// torch._scaled_mm's operands give the GEMM shape; FP4 operands (Float4_e2m1fn_x2) hold two values per
// byte along K, so the recorded inner dimension is half of K.
TEST(KinetoJson, ScaledMmShapesFp8AndPackedFp4) {
  auto op = [](int id, const char* type, const char* dims) {
    return std::string(R"({"ph":"X","cat":"cpu_op","name":"aten::_scaled_mm","pid":1,"tid":1,"ts":)") +
           std::to_string(10 * id) + R"(,"dur":5,"args":{"External id":)" + std::to_string(id) +
           R"(,"Input type":[")" + type + R"(",")" + type + R"(","float","float"],"Input Dims":)" + dims + "}},";
  };
  auto launch = [](int id) {
    return std::string(R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)") +
           std::to_string(10 * id + 1) + R"(,"dur":1,"args":{"External id":)" + std::to_string(id) +
           R"(,"correlation":)" + std::to_string(id) + "}},";
  };
  auto kernel = [](int id, const char* name) {
    return std::string(R"({"ph":"X","cat":"kernel","name":")") + name + R"(","pid":0,"tid":7,"ts":)" +
           std::to_string(100 * id) + R"(,"dur":20,"args":{"stream":7,"correlation":)" + std::to_string(id) + "}}";
  };
  const std::string text =
      R"({"traceEvents":[)" + op(1, "c10::Float8_e4m3fn", "[[256, 4096], [4096, 1024], [], []]") + launch(1) +
      kernel(1, "sm90_xmma_gemm_e4m3e4m3_bf16f32_f32_tn_n_tilesize128x128x128") + "," +
      op(2, "c10::Float4_e2m1fn_x2", "[[256, 2048], [2048, 1024], [], []]") + launch(2) +
      kernel(2, "cutlass3x_sm100_bstensorop_s256x128x256gemm_block_scaled_ue4m3xe2m1_ue4m3xe2m1_f32_bf16_bf16") +
      "]}";
  Captured c;
  KernelCollector out;
  parse_kineto_json(text, "scaled.json", c.opt, out);
  const std::vector<Kernel> ks = out.take();
  ASSERT_EQ(ks.size(), 2u);
  for (const Kernel& k : ks) {
    EXPECT_EQ(k.cls, KernelClass::gemm) << k.name;
    EXPECT_EQ(k.m, 256) << k.name;
    EXPECT_EQ(k.n, 1024) << k.name;
    EXPECT_EQ(k.k, 4096) << k.name;  // the FP4 op records 2048 bytes per row: 4096 values
  }
  EXPECT_EQ(ks[0].dtype, DType::fp8);
  EXPECT_EQ(ks[1].dtype, DType::fp4);
}

TEST(KinetoJson, ProfilerStepSelectsKernelsLaunchedInTheStep) {
  Captured c;
  c.opt.step.profiler_step = 1;
  auto ks = read(fixture("kineto_trace.json"), c.opt);
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_NEAR(total_us(ks), 50.75, 1e-9);
  // Step 2's GEMM runs on the GPU after the step's CPU range ended; it still belongs to step 2.
  c.opt.step.profiler_step = 2;
  ks = read(fixture("kineto_trace.json"), c.opt);
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_NEAR(total_us(ks), 16.25, 1e-9);
}

TEST(KinetoJson, AnnotationFallsBackToGpuUserAnnotation) {
  Captured c;
  c.opt.step.annotation = "gpu_only_range";
  auto ks = read(fixture("kineto_trace.json"), c.opt);
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_NEAR(total_us(ks), 48.75, 1e-9);
  c.opt.step.annotation = "ProfilerStep#2";
  EXPECT_EQ(read(fixture("kineto_trace.json"), c.opt).size(), 3u);
}

TEST(KinetoJson, MissingStepListsAvailableRanges) {
  Captured c;
  c.opt.step.profiler_step = 9;
  expect_input_error([&] { read(fixture("kineto_trace.json"), c.opt); },
                     {"kineto_trace.json", "ProfilerStep#9", "ProfilerStep#1", "gpu_only_range"});
}

TEST(KinetoJson, LegacySpellingsGzipAndBoardVariantByProperties) {
  Captured c;
  const std::string gz = gzip_file(read_file(fixture("kineto_legacy.json")), "legacy.json.gz");
  EXPECT_EQ(detect_format(gz), TraceFormat::kineto_json);
  auto ks = read(gz, c.opt);
  std::remove(gz.c_str());
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_NEAR(total_us(ks), 13.0, 1e-9);
  EXPECT_EQ(ks[0].cls, KernelClass::gemm);
  EXPECT_EQ(ks[0].batch, 8);
  EXPECT_EQ(ks[0].m, 64);
  EXPECT_EQ(ks[0].k, 32);
  EXPECT_EQ(ks[0].n, 16);
  EXPECT_EQ(ks[0].dtype, DType::bf16);
  EXPECT_EQ(ks[0].grid[2], 8);
  EXPECT_EQ(ks[1].cls, KernelClass::memset);
  EXPECT_EQ(ks[2].cls, KernelClass::memcpy);
  for (const Kernel& k : ks) EXPECT_EQ(k.gpu, "A100-SXM4-40GB");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("NVIDIA A100-PG509-200"), std::string::npos) << c.warnings[0];
  EXPECT_NE(c.warnings[0].find("by properties"), std::string::npos) << c.warnings[0];
}

TEST(KinetoJson, ParsesBytesPlainAndGzipped) {
  Captured c;
  const std::string text = read_file(fixture("kineto_legacy.json"));
  KernelCollector a;
  parse_kineto_json(text, "mem.json", c.opt, a);
  EXPECT_EQ(a.size(), 3u);
  const std::string gz = gzip_file(text, "bytes.json.gz");
  KernelCollector b;
  parse_kineto_json(read_file(gz), "mem.json.gz", c.opt, b);
  std::remove(gz.c_str());
  EXPECT_EQ(b.size(), 3u);
}

// The reader streams the trace: the device properties may follow the events, the events may be the
// whole file (a bare array), and a kernel's launch and CPU op may come after it; other top-level keys,
// nested as they like, are skipped.
TEST(KinetoJson, StreamsEventsInAnyOrderOfTheTrace) {
  Captured c;
  const std::string kernel =
      R"({"ph":"X","cat":"kernel","name":"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn","ts":105,"dur":9,)"
      R"("args":{"device":0,"correlation":7,"grid":[16,8,1],"block":[256,1,1]}})";
  const std::string launch =
      R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":101,"dur":3,"args":{"correlation":7,"External id":3}})";
  const std::string op =
      R"({"ph":"X","cat":"cpu_op","name":"aten::mm","ts":100,"dur":6,"args":{"External id":3,)"
      R"("Input Dims":[[64,128],[128,256]],"Input type":["c10::BFloat16","c10::BFloat16"]}})";
  const std::string props = R"([{"id":0,"name":"NVIDIA H100 80GB HBM3","numSms":132,"computeMajor":9,"computeMinor":0}])";
  const std::string late = R"({"other":{"nested":[1,[2,{"x":null}]],"traceEvents":"not these"},"traceEvents":[)" +
                           kernel + "," + launch + "," + op + R"(],"deviceProperties":)" + props +
                           R"(,"after":[1,[2],{"x":[3]}],"traceName":"t"})";
  KernelCollector a;
  parse_kineto_json(late, "late.json", c.opt, a);
  std::vector<Kernel> ks = a.take();
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks[0].gpu, "H100-SXM");
  EXPECT_EQ(ks[0].dtype, DType::bf16);
  EXPECT_EQ(ks[0].m, 64);
  EXPECT_EQ(ks[0].n, 256);
  EXPECT_EQ(ks[0].k, 128);
  EXPECT_EQ(ks[0].grid[0], 16);
  EXPECT_DOUBLE_EQ(ks[0].duration_us, 9);
  KernelCollector b;
  parse_kineto_json("[" + op + "," + launch + "," + kernel + "]", "bare.json", c.opt, b);
  ks = b.take();
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks[0].m, 64);
  expect_input_error([&] { parse_kineto_json(R"({"traceEvents":{"ph":"X"}})", "obj.json", c.opt, b); },
                     {"obj.json", "'traceEvents' is not an array"});
  expect_input_error([&] { parse_kineto_json("42", "num.json", c.opt, b); }, {"num.json", "expected a JSON object"});
  expect_input_error([&] { parse_kineto_json(R"({"traceEvents":[)" + op + R"(,[1]]})", "arr.json", c.opt, b); },
                     {"arr.json: traceEvents[1]", "not an object"});
}

TEST(KinetoJson, AggregatesAcrossSteps) {
  Captured c;
  auto ks = read(fixture("kineto_trace.json"), c.opt, true);
  EXPECT_EQ(ks.size(), 6u);  // six distinct kernels
  EXPECT_NEAR(total_us(ks), 67.0, 1e-9);
}

TEST(KinetoJson, BadInputsNameTheFileAndPlace) {
  Captured c;
  KernelCollector out;
  const std::string text = read_file(fixture("kineto_trace.json"));
  expect_input_error([&] { parse_kineto_json(text.substr(0, text.size() / 2), "half.json", c.opt, out); },
                     {"half.json", "invalid JSON (byte "});
  expect_input_error(
      [&] {
        parse_kineto_json(R"({"traceEvents":[{"ph":"M"},{"ph":"X","cat":"kernel","name":"k","ts":"12","dur":1}]})",
                          "ts.json", c.opt, out);
      },
      {"ts.json: traceEvents[1]", "'ts'"});
  // A number too large for a double (found by the fuzzer: it escaped as an exception).
  expect_input_error([&] { parse_kineto_json(R"({"deviceProperties":[{"totalGlobalMem": 42314694e5536}]})", "big.json", c.opt, out); },
                     {"big.json: invalid JSON", "number overflow"});
  expect_input_error([&] { parse_kineto_json(R"({"traceEvents":[1]})", "n.json", c.opt, out); },
                     {"n.json: traceEvents[0]", "not an object"});
  expect_input_error([&] { parse_kineto_json(R"({"events":[]})", "o.json", c.opt, out); },
                     {"o.json", "traceEvents"});
  expect_input_error([&] { parse_kineto_json("", "e.json", c.opt, out); }, {"e.json", "empty"});
  const std::string gz = gzip_file(text, "trunc.json.gz");
  std::string bytes = read_file(gz);
  std::remove(gz.c_str());
  expect_input_error([&] { parse_kineto_json(bytes.substr(0, bytes.size() / 2), "t.json.gz", c.opt, out); },
                     {"t.json.gz", "truncated"});
  const std::string path = temp_path("trunc2.json.gz");
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size() / 2, f);
    std::fclose(f);
  }
  expect_input_error([&] { read(path, c.opt); }, {path});
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kcast
