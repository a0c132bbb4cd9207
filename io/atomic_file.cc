#include "io/atomic_file.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>

#include "model/error.h"

namespace kcast {

namespace {

// The temporary files being written, for the signal handler: fixed slots (a handler may not allocate),
// each free (0), being filled (1) or holding a path the handler may remove (2).
constexpr int kTempSlots = 64;
std::atomic<int> slot_state[kTempSlots];
char slot_path[kTempSlots][PATH_MAX];

int track_temp(const std::string& tmp) {
  if (tmp.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    int free = 0;
    if (!slot_state[i].compare_exchange_strong(free, 1)) continue;
    std::memcpy(slot_path[i], tmp.c_str(), tmp.size() + 1);
    slot_state[i].store(2);
    return i;
  }
  return -1;  // more outputs in flight than slots: removed on errors as before, not on signals
}

void untrack_temp(int slot) {
  if (slot >= 0) slot_state[slot].store(0);
}

extern "C" void remove_temps_and_reraise(int sig) {
  for (int i = 0; i < kTempSlots; ++i)
    if (slot_state[i].load() == 2) ::unlink(slot_path[i]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// The slot holding `tmp`, freed: the file is gone or renamed into place.
void forget_temp(const std::string& tmp) {
  for (int i = 0; i < kTempSlots; ++i)
    if (slot_state[i].load() == 2 && tmp == slot_path[i]) untrack_temp(i);
}

void remove_temp(const std::string& tmp) {
  std::remove(tmp.c_str());
  forget_temp(tmp);
}

// The file the bytes for `path` belong in: a symlink's target, so that the link survives and what it
// points at is what changes (as a shell's `>` does); `path` itself otherwise, or for a dangling link.
std::string write_target(const std::string& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

void write_stream(const std::string& path, std::ofstream& out, const std::function<void(std::ostream&)>& write) {
  if (!out) throw InputError(path + ": cannot write: " + std::strerror(errno));
  write(out);
  out.flush();
  if (!out) throw InputError(path + ": write failed");
}

// Writes `path`'s content to a temporary file beside its target and returns that file's name, or
// "" where the target is a device or pipe and has taken the bytes already.
std::string staged_write(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string target = write_target(path);
  struct stat st{};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory");
    // A device or a pipe (/dev/null, /dev/stdout, a FIFO) cannot be replaced by a rename, and holds
    // nothing a failed run could destroy: it takes the bytes as they come.
    std::ofstream out(target, std::ios::binary);
    write_stream(path, out, write);
    return {};
  }
  // Unique per process and call: two outputs of one run never share a temporary file.
  static std::atomic<unsigned> serial{0};
  const std::string tmp = target + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  track_temp(tmp);
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    write_stream(path, out, write);
  } catch (...) {
    remove_temp(tmp);
    throw;
  }
  return tmp;
}

void commit_staged(const std::string& path, const std::string& tmp) {
  if (tmp.empty()) return;
  if (std::rename(tmp.c_str(), write_target(path).c_str()) != 0) {
    const std::string why = std::strerror(errno);
    remove_temp(tmp);
    throw InputError(path + ": cannot rename into place: " + why);
  }
  forget_temp(tmp);
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  commit_staged(path, staged_write(path, write));
}

StagedOutputs::~StagedOutputs() {
  for (const auto& [path, tmp] : staged_)
    if (!tmp.empty()) remove_temp(tmp);
}

void install_interrupt_cleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old{};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa{};
    sa.sa_handler = remove_temps_and_reraise;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

void StagedOutputs::stage(const std::string& path, const std::function<void(std::ostream&)>& write) {
  staged_.emplace_back(path, staged_write(path, write));
}

void StagedOutputs::commit() {
  for (auto& [path, tmp] : staged_) {
    const std::string t = std::exchange(tmp, {});
    commit_staged(path, t);
  }
}

std::string read_file(const std::string& path, std::size_t max_bytes) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory");
  if (max_bytes == 0) {
    ss << in.rdbuf();
    return ss.str();
  }
  // Stop one chunk past the limit, so that a device that never ends (/dev/zero) or a file too large to
  // be what it claims fails here instead of exhausting memory.
  std::string s;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    s.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (s.size() > max_bytes)
      throw InputError(path + ": larger than " + std::to_string(max_bytes >> 20) + " MiB: not a file of this kind");
  }
  return s;
}

}  // namespace kcast
