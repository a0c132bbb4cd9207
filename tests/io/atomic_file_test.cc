#include "io/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <vector>
#include <thread>

#include "model/error.h"
#include "tests/input_error_of.h"
#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

namespace fs = std::filesystem;
using kcast::testing::input_error_of;
using kcast::testing::run_kcast;

// A fresh directory per test: the files and links each test makes stay its own.
fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("kcast_atomic_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

TEST(AtomicFile, ReplacesAFileAndLeavesNoTemporary) {
  const fs::path d = fresh_dir("replace");
  put(d / "out.csv", "old\n");
  write_file_atomically((d / "out.csv").string(), [](std::ostream& o) { o << "new\n"; });
  EXPECT_EQ(read_file((d / "out.csv").string()), "new\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);
}

TEST(AtomicFile, ASymlinkKeepsPointingAtItsTargetWhichGetsTheContent) {
  const fs::path d = fresh_dir("symlink");
  put(d / "target.csv", "old\n");
  fs::create_symlink(d / "target.csv", d / "link.csv");
  write_file_atomically((d / "link.csv").string(), [](std::ostream& o) { o << "new\n"; });
  EXPECT_TRUE(fs::is_symlink(d / "link.csv"));
  EXPECT_EQ(read_file((d / "target.csv").string()), "new\n");
}

TEST(AtomicFile, AFifoIsWrittenThroughNotReplaced) {
  const fs::path d = fresh_dir("fifo");
  const std::string fifo = (d / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader is detached and waited for with a bound: were the FIFO renamed over, it would wait
  // for a writer forever.
  auto got = std::make_shared<std::promise<std::string>>();
  std::future<std::string> read = got->get_future();
  std::thread([fifo, got] { got->set_value(read_file(fifo)); }).detach();
  write_file_atomically(fifo, [](std::ostream& o) { o << "through the pipe\n"; });
  ASSERT_EQ(read.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(read.get(), "through the pipe\n");
  struct stat st{};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(AtomicFile, ADirectoryIsAnErrorNamingIt) {
  const fs::path d = fresh_dir("dir");
  const std::string msg = input_error_of([&] { write_file_atomically(d.string(), [](std::ostream& o) { o << "x"; }); });
  EXPECT_NE(msg.find(d.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("directory"), std::string::npos) << msg;
}

TEST(AtomicFile, StagedOutputsReplaceNothingUntilAllAreWritten) {
  const fs::path d = fresh_dir("staged");
  put(d / "a.json", "keep a\n");
  put(d / "b.csv", "keep b\n");
  {
    StagedOutputs outs;
    outs.stage((d / "a.json").string(), [](std::ostream& o) { o << "new a\n"; });
    EXPECT_THROW(outs.stage((d / "no" / "such" / "b.csv").string(), [](std::ostream& o) { o << "x"; }), InputError);
  }  // the run fails here: nothing committed
  EXPECT_EQ(read_file((d / "a.json").string()), "keep a\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 2);  // no temporaries left
  StagedOutputs outs;
  outs.stage((d / "a.json").string(), [](std::ostream& o) { o << "new a\n"; });
  outs.stage((d / "b.csv").string(), [](std::ostream& o) { o << "new b\n"; });
  EXPECT_EQ(read_file((d / "b.csv").string()), "keep b\n");
  outs.commit();
  EXPECT_EQ(read_file((d / "a.json").string()), "new a\n");
  EXPECT_EQ(read_file((d / "b.csv").string()), "new b\n");
}

TEST(AtomicFile, ReadingStopsPastTheLimitEvenOnAnEndlessDevice) {
  const fs::path d = fresh_dir("limit");
  put(d / "small.json", std::string(1000, 'x'));
  EXPECT_EQ(read_file((d / "small.json").string(), 1000).size(), 1000u);
  const std::string msg = input_error_of([] { read_file("/dev/zero", std::size_t{1} << 20); });
  EXPECT_NE(msg.find("/dev/zero"), std::string::npos) << msg;
  EXPECT_NE(msg.find("larger than 1 MiB"), std::string::npos) << msg;
  EXPECT_NE(input_error_of([&] { read_file(d.string()); }).find("is a directory"), std::string::npos);
}

// The CLI: a full disk under stdout is a failed run, not exit 0 with the report lost.
TEST(AtomicFile, AStdoutThatCannotBeWrittenFailsTheRun) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const fs::path d = fresh_dir("stdout");
  const std::string err = (d / "stderr.txt").string();
  const int status = std::system(("'" KCAST_BINARY "' gpus > /dev/full 2> '" + err + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_NE(read_file(err).find("kcast: <stdout>: write failed"), std::string::npos) << read_file(err);
  EXPECT_EQ(run_kcast("gpus > /dev/null").rc, 0);
}

}  // namespace
}  // namespace kcast

// SIGINT / SIGTERM during a write (#42 item 4): the temporary file beside the output is removed and the
// signal ends the process as it would have; the existing output stays as it was.
TEST(AtomicFile, ASignalDuringTheWriteRemovesTheTemporaryFile) {
  namespace fs = std::filesystem;
  for (int sig : {SIGTERM, SIGINT}) {
    const fs::path dir = fs::temp_directory_path() / ("kcast_signal_" + std::to_string(::getpid()) + "_" +
                                                      std::to_string(sig));
    fs::create_directories(dir);
    const fs::path out = dir / "out.csv";
    { std::ofstream(out) << "old\n"; }
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      kcast::install_interrupt_cleanup();
      kcast::write_file_atomically(out.string(), [&](std::ostream& o) {
        o << "half a file";
        o.flush();
        ::raise(sig);  // the user's Ctrl-C / kill, while the temporary file exists
      });
      ::_exit(0);  // not reached: the signal ends the child
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status)) << sig;
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(WTERMSIG(status), sig);
    }
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
    EXPECT_EQ(left, std::vector<std::string>{"out.csv"}) << sig;
    std::ifstream in(out);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "old");
    fs::remove_all(dir);
  }
}
