// Throughput of the trace readers (MB/s and rows/s) on synthetic traces shaped like real ones:
// nsys cuda_gpu_trace CSV (plain and --aggregate), nsys SQLite, ncu details CSV, Kineto JSON.
// Inputs are generated in memory once per benchmark; the readers run through their parse_* entry
// points, so the numbers exclude disk I/O.
#include <benchmark/benchmark.h>
#include <sqlite3.h>

#include <cstdio>
#include <string>

#include "predict/import/import.h"

namespace {

using namespace kcast;

const char* const kNames[] = {
    "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char *, 1>>(int, T2, T3)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::Half, float, c10::Half, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>>(T3)",
    "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel",
    "void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_64x64_32x6_tn_align8>(Params)",
    "[CUDA memcpy Host-to-Device]",
    "[CUDA memset]",
};
constexpr int kNumNames = 8;

ImportOptions quiet() {
  ImportOptions o;
  o.warn = [](const std::string&) {};
  return o;
}

std::string nsys_csv(int rows) {
  std::string s =
      "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
      "Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n";
  char buf[512];
  long long t = 500000000;
  for (int i = 0; i < rows; ++i) {
    const int n = i % kNumNames;
    const int dur = 1500 + (i * 7919) % 90000;
    if (n >= 6) {
      std::snprintf(buf, sizeof buf, "%lld,%d,%d,,,,,,,,,,%.3f,%.3f,Pageable,Device,NVIDIA A100-SXM4-40GB (0),1,7,%s\n",
                    t, dur, i, 4.194, 2662.2, kNames[n]);
    } else {
      std::snprintf(buf, sizeof buf, "%lld,%d,%d,%d,%d,1,128,1,1,%d,0.000,0.049,,,,,NVIDIA A100-SXM4-40GB (0),1,7,\"%s\"\n",
                    t, dur, i, 16 + n, 32, 64 + n, kNames[n]);
    }
    s += buf;
    t += dur + 1000;
  }
  return s;
}

std::string ncu_details(int kernels) {
  std::string s =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
      "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  const char* metrics[][2] = {{"gpu__time_duration.sum", "usecond"}, {"dram__bytes_read.sum", "Mbyte"},
                              {"dram__bytes_write.sum", "Kbyte"},
                              {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst"},
                              {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst"},
                              {"sm__inst_executed_pipe_tensor.sum", "inst"},
                              {"launch__registers_per_thread", "register/thread"}};
  char buf[768];
  for (int i = 0; i < kernels; ++i)
    for (const auto& m : metrics) {
      std::snprintf(buf, sizeof buf,
                    "\"%d\",\"1\",\"python\",\"h\",\"%s\",\"1\",\"7\",\"(128, 1, 1)\",\"(8, 32, 1)\",\"0\",\"8.0\","
                    "\"Command line profiler metrics\",\"%s\",\"%s\",\"1,234.5\"\n",
                    i, kNames[i % 6], m[0], m[1]);
      s += buf;
    }
  return s;
}

std::string kineto_json(int kernels) {
  std::string s = "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA A100-SXM4-40GB\",\"numSms\":108,"
                  "\"computeMajor\":8,\"computeMinor\":0,\"totalGlobalMem\":42314694656}],\"traceEvents\":[\n";
  char buf[1024];
  for (int i = 0; i < kernels; ++i) {
    const double ts = 1000.0 + i * 20.0;
    std::snprintf(buf, sizeof buf,
                  "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":5,"
                  "\"args\":{\"External id\":%d,\"Input Dims\":[[128,1024],[1024,512]],\"Input type\":[\"c10::Half\",\"c10::Half\"]}},\n"
                  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":3,"
                  "\"args\":{\"External id\":%d,\"cbid\":211,\"correlation\":%d}},\n"
                  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%.3f,\"dur\":12.5,"
                  "\"args\":{\"External id\":%d,\"device\":0,\"stream\":7,\"correlation\":%d,\"registers per thread\":128,"
                  "\"shared memory\":0,\"grid\":[4,8,1],\"block\":[128,1,1]}}%s\n",
                  ts, i, ts + 1, i, 100000 + i, kNames[0], ts + 10, i, 100000 + i, i + 1 < kernels ? "," : "");
    s += buf;
  }
  return s + "]}\n";
}

std::string nsys_sqlite(int kernels) {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  sqlite3_exec(db,
               "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
               "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, smCount INTEGER, totalMemory INTEGER,"
               " computeMajor INTEGER, computeMinor INTEGER);"
               "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA A100-SXM4-40GB', 108, 42314694656, 8, 0);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, \"end\" INTEGER, deviceId INTEGER,"
               " streamId INTEGER, demangledName INTEGER, shortName INTEGER, gridX INTEGER, gridY INTEGER,"
               " gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER,"
               " staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);",
               nullptr, nullptr, nullptr);
  sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  for (int i = 0; i < 6; ++i) {
    std::string q = "INSERT INTO StringIds VALUES (" + std::to_string(i) + ", '" + kNames[i] + "')";
    sqlite3_exec(db, q.c_str(), nullptr, nullptr, nullptr);
  }
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, 0, 7, ?3, ?3, 16, 32, 1, 128, 1, 1, 64, 0, 0)",
                     -1, &st, nullptr);
  for (int i = 0; i < kernels; ++i) {
    sqlite3_bind_int64(st, 1, 1000000LL + i * 20000LL);
    sqlite3_bind_int64(st, 2, 1000000LL + i * 20000LL + 12000);
    sqlite3_bind_int(st, 3, i % 6);
    sqlite3_step(st);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_int64 size = 0;
  unsigned char* p = sqlite3_serialize(db, "main", &size, 0);
  std::string bytes(reinterpret_cast<const char*>(p), size_t(size));
  sqlite3_free(p);
  sqlite3_close(db);
  return bytes;
}

template <class Parse>
void run(benchmark::State& state, const std::string& bytes, Parse parse, bool aggregate) {
  const ImportOptions opt = quiet();
  size_t rows = 0;
  for (auto _ : state) {
    if (aggregate) {
      KernelAggregator sink;
      parse(bytes, opt, sink);
      rows = sink.groups();
      benchmark::DoNotOptimize(sink.take());
    } else {
      KernelCollector sink;
      parse(bytes, opt, sink);
      rows = sink.size();
      benchmark::DoNotOptimize(sink.take());
    }
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes.size()));
  state.counters["rows/s"] = benchmark::Counter(double(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["out_rows"] = double(rows);
}

void BM_NsysCsv(benchmark::State& state) {
  const std::string bytes = nsys_csv(int(state.range(0)));
  run(state, bytes, [](const std::string& b, const ImportOptions& o, KernelSink& s) { parse_nsys_csv(b, "bench.csv", o, s); }, false);
}
void BM_NsysCsvAggregate(benchmark::State& state) {
  const std::string bytes = nsys_csv(int(state.range(0)));
  run(state, bytes, [](const std::string& b, const ImportOptions& o, KernelSink& s) { parse_nsys_csv(b, "bench.csv", o, s); }, true);
}
void BM_NsysSqlite(benchmark::State& state) {
  const std::string bytes = nsys_sqlite(int(state.range(0)));
  run(state, bytes, [](const std::string& b, const ImportOptions& o, KernelSink& s) { parse_nsys_sqlite(b, "bench.sqlite", o, s); }, false);
}
void BM_NcuCsv(benchmark::State& state) {
  const std::string bytes = ncu_details(int(state.range(0)));
  run(state, bytes, [](const std::string& b, const ImportOptions& o, KernelSink& s) { parse_ncu_csv(b, "bench-ncu.csv", o, s); }, false);
}
void BM_KinetoJson(benchmark::State& state) {
  const std::string bytes = kineto_json(int(state.range(0)));
  run(state, bytes, [](const std::string& b, const ImportOptions& o, KernelSink& s) { parse_kineto_json(b, "bench.json", o, s); }, false);
}

BENCHMARK(BM_NsysCsv)->Arg(200000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NsysCsvAggregate)->Arg(200000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NsysSqlite)->Arg(200000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NcuCsv)->Arg(5000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KinetoJson)->Arg(50000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
