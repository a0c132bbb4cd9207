// Where the commands print: std::cout and std::cerr, or, on the thread that asked, other streams.
// The Python module (python/) runs a command in-process on any thread and reads what it printed from
// strings; each thread's streams are its own, so commands on several threads do not mix output.
#pragma once
#include <ostream>

namespace kcast {

std::ostream& console_out();  // the command's stdout
std::ostream& console_err();  // its stderr (warnings, notes)

// printf into console_out() (the commands' tables are printf-formatted).
void console_printf(const char* format, ...) __attribute__((format(printf, 1, 2)));

// Sends this thread's console to `out` / `err` while it lives.
class ConsoleCapture {
 public:
  ConsoleCapture(std::ostream& out, std::ostream& err);
  ~ConsoleCapture();
  ConsoleCapture(const ConsoleCapture&) = delete;
  ConsoleCapture& operator=(const ConsoleCapture&) = delete;

 private:
  std::ostream *prev_out_, *prev_err_;
};

}  // namespace kcast
