// The house rules of docs/architecture.md, checked on the source tree: dependencies point down the
// layers (model/ <- io/ <- calibrate/ <- predict/), importers, synth and microbench read files through
// io/ and never reach into calibrate/, no hand-written source file outgrows 40 KB, the README stays a
// first page (<= 16 KB) and every other document (docs/accuracy/ apart) a readable size (<= 40 KB).
// `kcast --help` names the documents, and they exist.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
const fs::path kRoot = KCAST_SOURCE_DIR;

std::vector<fs::path> files_under(const std::string& folder, std::initializer_list<const char*> exts) {
  std::vector<fs::path> out;
  if (!fs::exists(kRoot / folder)) return out;
  for (const auto& e : fs::recursive_directory_iterator(kRoot / folder)) {
    if (!e.is_regular_file()) continue;
    for (const char* x : exts)
      if (e.path().extension() == x) out.push_back(e.path());
  }
  return out;
}

// The project headers a file includes ("folder/name.h").
std::vector<std::string> includes_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  static const std::regex inc(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, inc)) out.push_back(m[1]);
  return out;
}

// Every include of the files under `folder` that starts with one of `forbidden`.
std::vector<std::string> violations(const std::string& folder, std::initializer_list<const char*> forbidden) {
  std::vector<std::string> bad;
  for (const fs::path& f : files_under(folder, {".cc", ".h", ".cu"}))
    for (const std::string& inc : includes_of(f))
      for (const char* prefix : forbidden)
        if (inc.rfind(prefix, 0) == 0) bad.push_back(fs::relative(f, kRoot).string() + " includes " + inc);
  return bad;
}

TEST(Layering, DependenciesPointDownTheLayers) {
  EXPECT_EQ(violations("model", {"io/", "calibrate/", "predict/", "microbench/"}), std::vector<std::string>{});
  EXPECT_EQ(violations("io", {"calibrate/", "predict/", "microbench/"}), std::vector<std::string>{});
  EXPECT_EQ(violations("calibrate", {"predict/", "microbench/"}), std::vector<std::string>{});
}

TEST(Layering, ImportersSynthAndMicrobenchReadFilesThroughIoNotCalibrate) {
  for (const char* folder : {"predict/import", "predict/synth", "microbench"})
    EXPECT_EQ(violations(folder, {"calibrate/"}), std::vector<std::string>{}) << folder;
  // The io/ layer holds the readers a newcomer looks for.
  for (const char* f : {"io/kernel_list_csv.h", "io/csv_source.h", "io/atomic_file.h", "io/gpu_database_csv.h"})
    EXPECT_TRUE(fs::exists(kRoot / f)) << f;
}

TEST(Layering, NoHandWrittenSourceFileOver40KB) {
  for (const char* folder : {"model", "io", "calibrate", "predict", "microbench", "tests", "bench"})
    for (const fs::path& f : files_under(folder, {".cc", ".h", ".cu", ".py"}))
      EXPECT_LE(fs::file_size(f), 40u * 1024) << fs::relative(f, kRoot);
}

TEST(Layering, ReadmeIsAFirstPageAndDocsStayReadable) {
  EXPECT_LE(fs::file_size(kRoot / "README.md"), 16u * 1024);
  std::ifstream in(kRoot / "README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The two set-up commands come before anything else a reader would scroll through.
  const size_t example = readme.find("scripts/run-example.sh"), tests = readme.find("scripts/run-tests.sh");
  ASSERT_NE(example, std::string::npos);
  ASSERT_NE(tests, std::string::npos);
  EXPECT_LT(std::max(example, tests), readme.size() / 4);
  for (const fs::path& f : files_under("docs", {".md"}))
    if (f.parent_path().filename() != "accuracy") {
      EXPECT_LE(fs::file_size(f), 40u * 1024) << f;
    }
  for (const fs::path& f : files_under("predict", {".md"})) EXPECT_LE(fs::file_size(f), 40u * 1024) << f;
}

// Links from the README and docs/ stay inside the repository: a clone has no ../shared/.
TEST(Layering, DocumentsLinkOnlyInsideTheRepository) {
  std::vector<fs::path> docs = files_under("docs", {".md"});
  docs.push_back(kRoot / "README.md");
  static const std::regex link(R"re(\]\(([^)#\s]+)(#[^)]*)?\))re");
  for (const fs::path& d : docs) {
    if (d.parent_path().filename() == "accuracy") continue;
    std::ifstream in(d);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("../shared/docs"), std::string::npos) << d;
    for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it) {
      const std::string target = (*it)[1];
      if (target.rfind("http", 0) == 0 || target.rfind("mailto:", 0) == 0) continue;
      const fs::path resolved = fs::weakly_canonical(d.parent_path() / target);
      EXPECT_TRUE(fs::exists(resolved)) << d.filename() << " links to " << target;
      EXPECT_EQ(resolved.string().rfind(fs::weakly_canonical(kRoot).string(), 0), 0u)
          << d.filename() << " links outside the repository: " << target;
    }
  }
}

// Shipped data names no temporary path (#42 item 5): a model's provenance says what it was fitted
// from in terms a clone can follow.
TEST(Layering, ShippedModelsNameNoTemporaryPath) {
  for (const fs::path& f : files_under("data/models", {".json"})) {
    std::ifstream in(f);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const char* tmp : {"\"/tmp/", "/tmp.", "\"/var/tmp/"})
      EXPECT_EQ(text.find(tmp), std::string::npos) << f << " names a temporary path (" << tmp << ")";
  }
}

TEST(Layering, HelpNamesTheDocumentsAndTheyExist) {
  FILE* p = popen("'" KCAST_BINARY "' --help", "r");
  ASSERT_NE(p, nullptr);
  std::string help;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) help.append(buf, n);
  pclose(p);
  static const std::regex doc(R"re((docs/[A-Za-z0-9_./-]+\.md|README\.md))re");
  int named = 0;
  for (std::sregex_iterator it(help.begin(), help.end(), doc), end; it != end; ++it, ++named)
    EXPECT_TRUE(fs::exists(kRoot / (*it)[1].str())) << (*it)[1];
  EXPECT_GE(named, 4) << help;
}

}  // namespace
