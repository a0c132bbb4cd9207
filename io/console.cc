#include "io/console.h"

#include <cstdarg>
#include <cstdio>
#include <iostream>
#include <vector>

namespace kcast {

namespace {
thread_local std::ostream* t_out = nullptr;
thread_local std::ostream* t_err = nullptr;
}  // namespace

std::ostream& console_out() { return t_out ? *t_out : std::cout; }
std::ostream& console_err() { return t_err ? *t_err : std::cerr; }

void console_printf(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  char small[512];
  const int n = std::vsnprintf(small, sizeof small, format, args);
  va_end(args);
  if (n >= 0 && size_t(n) < sizeof small) {
    console_out().write(small, n);
  } else if (n >= 0) {
    std::vector<char> big(size_t(n) + 1);
    std::vsnprintf(big.data(), big.size(), format, again);
    console_out().write(big.data(), n);
  }
  va_end(again);
}

ConsoleCapture::ConsoleCapture(std::ostream& out, std::ostream& err) : prev_out_(t_out), prev_err_(t_err) {
  t_out = &out;
  t_err = &err;
}

ConsoleCapture::~ConsoleCapture() {
  t_out = prev_out_;
  t_err = prev_err_;
}

}  // namespace kcast
