#include "io/console.h"

#include <iostream>

namespace kcast {

namespace {
thread_local std::ostream* t_out = nullptr;
thread_local std::ostream* t_err = nullptr;
}  // namespace

std::ostream& console_out() { return t_out ? *t_out : std::cout; }
std::ostream& console_err() { return t_err ? *t_err : std::cerr; }

ConsoleCapture::ConsoleCapture(std::ostream& out, std::ostream& err) : prev_out_(t_out), prev_err_(t_err) {
  t_out = &out;
  t_err = &err;
}

ConsoleCapture::~ConsoleCapture() {
  t_out = prev_out_;
  t_err = prev_err_;
}

}  // namespace kcast
