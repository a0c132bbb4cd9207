// Tests of the kernel-name classifier: the shipped rules against labelled real kernel names
// (tests/data/kernel_names/*.tsv, labels decided by hand, see the README there), first-match rule
// order, error reporting for bad rules, and the per-name cache under concurrent use.
#include <gtest/gtest.h>

#include <csv.h>

#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "io/classifier_rules.h"
#include "model/classifier.h"
#include "model/error.h"

namespace kcast {
namespace {

struct Labelled {
  KernelClass cls;
  std::string name;
  unsigned line;
};

// Reads `<class>\t<name>` lines; '#' lines and blank lines are comments.
std::vector<Labelled> read_labelled(const std::string& file) {
  io::CSVReader<2, io::trim_chars<>, io::no_quote_escape<'\t'>, io::throw_on_overflow,
                io::single_and_empty_line_comment<'#'>>
      in(file);
  in.set_header("class", "name");
  std::vector<Labelled> out;
  char *cls = nullptr, *name = nullptr;
  while (in.read_row(cls, name)) {
    auto c = parse_kernel_class(cls);
    if (!c) ADD_FAILURE() << file << ":" << in.get_file_line() << ": unknown class '" << cls << "'";
    out.push_back({c.value_or(KernelClass::other), name, in.get_file_line()});
  }
  return out;
}

const std::string kNames = std::string(KCAST_TEST_DATA) + "/kernel_names/";

TEST(Classifier, DevNamesAllClassifyCorrectly) {
  const Classifier& c = default_classifier();
  const auto names = read_labelled(kNames + "dev.tsv");
  ASSERT_GE(names.size(), 150u);
  for (const auto& n : names)
    EXPECT_EQ(to_string(c.classify(n.name)), to_string(n.cls))
        << "dev.tsv:" << n.line << ": " << n.name;
}

// Held-out names were gathered and labelled separately and never used to tune the rules: this is the
// honest estimate of accuracy on names users bring.
TEST(Classifier, HeldOutAccuracy) {
  const Classifier& c = default_classifier();
  const auto names = read_labelled(kNames + "heldout.tsv");
  ASSERT_GE(names.size(), 100u);
  std::map<KernelClass, std::pair<int, int>> per_class;  // correct, total
  int correct = 0;
  for (const auto& n : names) {
    const KernelClass got = c.classify(n.name);
    auto& [ok, total] = per_class[n.cls];
    ++total;
    if (got == n.cls) {
      ++ok;
      ++correct;
    } else {
      std::printf("heldout.tsv:%u: want %s, got %s: %.160s\n", n.line,
                  std::string(to_string(n.cls)).c_str(), std::string(to_string(got)).c_str(),
                  n.name.c_str());
    }
  }
  const double overall = double(correct) / double(names.size());
  std::printf("held-out accuracy %d/%zu = %.1f%%\n", correct, names.size(), 100 * overall);
  for (const auto& [cls, counts] : per_class)
    std::printf("  %-14s %d/%d\n", std::string(to_string(cls)).c_str(), counts.first,
                counts.second);
  EXPECT_GE(overall, 0.95);
  for (const auto& [cls, counts] : per_class) {
    if (counts.second >= 5) {
      EXPECT_GE(double(counts.first) / counts.second, 0.80) << "class " << to_string(cls);
    }
  }
}

TEST(Classifier, FirstMatchingRuleWins) {
  const Classifier specific_first({{"implicit_convolve_sgemm", KernelClass::conv},
                                   {"sgemm", KernelClass::gemm}});
  EXPECT_EQ(specific_first.classify("void implicit_convolve_sgemm<float>"), KernelClass::conv);
  EXPECT_EQ(specific_first.classify("volta_sgemm_128x64_nn"), KernelClass::gemm);

  const Classifier generic_first({{"sgemm", KernelClass::gemm},
                                  {"implicit_convolve_sgemm", KernelClass::conv}});
  EXPECT_EQ(generic_first.classify("void implicit_convolve_sgemm<float>"), KernelClass::gemm);
  EXPECT_EQ(generic_first.rule_count(), 2u);
}

TEST(Classifier, MatchesAnywhereCaseInsensitivelyAndDefaultsToOther) {
  const Classifier c({{"softmax", KernelClass::softmax}, {"^\\[CUDA memset", KernelClass::memset}});
  EXPECT_EQ(c.classify("void cunn_SoftMaxForward<4, float>"), KernelClass::softmax);
  EXPECT_EQ(c.classify("[CUDA memset]"), KernelClass::memset);
  EXPECT_EQ(c.classify("my_memset [CUDA memset]"), KernelClass::other);  // anchored pattern
  EXPECT_EQ(c.classify("some_kernel_nobody_has_seen"), KernelClass::other);
  EXPECT_EQ(c.classify(""), KernelClass::other);
}

TEST(Classifier, RulesTextParsesQuotedPatternsAndComments) {
  const std::string text =
      "class,pattern,note\n"
      "# a comment line\n"
      "\n"
      "gemm,\"gemm|gemv\",\"cuBLAS, all archs\"\n"
      "reduction,reduce_kernel,PyTorch reductions\n";
  const auto rules = parse_classifier_rules(text, "rules.csv");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].pattern, "gemm|gemv");
  EXPECT_EQ(rules[0].cls, KernelClass::gemm);
  EXPECT_EQ(rules[1].where, "rules.csv:5");
  const Classifier c(rules);
  EXPECT_EQ(c.classify("gemv2T_kernel_val"), KernelClass::gemm);
}

std::string error_of(const std::string& text) {
  try {
    load_classifier(text, "rules.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Classifier, BadRegexIsAnInputErrorNamingTheLine) {
  const std::string msg = error_of("class,pattern,note\ngemm,gemm,ok\nconv,conv(,broken\n");
  EXPECT_NE(msg.find("rules.csv:3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pattern"), std::string::npos) << msg;
}

TEST(Classifier, UnknownClassIsAnInputErrorNamingTheLine) {
  const std::string msg = error_of("class,pattern,note\ngemm,gemm,ok\nmatmul,mm,typo\n");
  EXPECT_NE(msg.find("rules.csv:3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("matmul"), std::string::npos) << msg;
}

TEST(Classifier, EmptyPatternAndMissingColumnAreInputErrors) {
  EXPECT_NE(error_of("class,pattern,note\ngemm,,empty\n").find("rules.csv:2"), std::string::npos);
  EXPECT_NE(error_of("class,note\ngemm,x\n").find("pattern"), std::string::npos);
}

TEST(Classifier, BadRegexInDirectConstructionIsAnInputError) {
  EXPECT_THROW(Classifier({{"[unclosed", KernelClass::gemm}}), InputError);
}

TEST(Classifier, VeryLongNamesDoNotBreakMatching) {
  const Classifier c({{"^volta_sgemm", KernelClass::gemm}, {"elementwise", KernelClass::elementwise}});
  const std::string long_name = "volta_sgemm_128x64_nn" + std::string(200000, 'x');
  EXPECT_EQ(c.classify(long_name), KernelClass::gemm);
}

// The shipped rules use greedy \w* runs, which libstdc++ matches recursively: a huge generated
// name must neither overflow the stack (also on a worker thread) nor change the answer.
TEST(Classifier, DefaultRulesSurviveHugeNames) {
  const std::string huge = "triton_per_fused_" + std::string(100000, 'a');
  KernelClass got = KernelClass::other;
  std::thread worker([&] { got = default_classifier().classify(huge); });
  worker.join();
  EXPECT_EQ(got, KernelClass::reduction);
  EXPECT_EQ(default_classifier().classify(std::string(50000, 'x')), KernelClass::other);
}

TEST(Classifier, CacheGivesTheSameAnswersUnderConcurrentCalls) {
  const Classifier& c = default_classifier();
  const std::vector<std::string> names = {
      "ampere_sgemm_128x64_tn",
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
      "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
      "void at::native::reduce_kernel<512, 1, ReduceOp>",
      "cudnn_infer_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1",
      "[CUDA memcpy Host-to-Device]",
      "triton_per_fused__softmax_0",
      "some_unknown_kernel"};
  const std::vector<KernelClass> want = {
      KernelClass::gemm,      KernelClass::elementwise, KernelClass::communication,
      KernelClass::reduction, KernelClass::conv,        KernelClass::memcpy,
      KernelClass::softmax,   KernelClass::other};
  // Fresh copies of the names per call, and a few uncached variants, so threads race on inserts.
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round)
        for (size_t i = 0; i < names.size(); ++i) {
          const std::string name = round % 2 ? names[i] : names[i] + "_" + std::to_string(round % 7);
          if (c.classify(name) != want[i]) ++mismatches[t];
        }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(Classifier, DefaultRulesLoad) {
  EXPECT_GE(default_classifier().rule_count(), 30u);
}

}  // namespace
}  // namespace kcast
