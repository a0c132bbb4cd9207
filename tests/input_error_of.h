// The message of the InputError a call throws, for tests that check what bad input is told.
#pragma once
#include <functional>
#include <string>

#include "model/error.h"

namespace kcast::testing {

// Empty when `f` throws no InputError, which then fails the caller's expectation on the message.
inline std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace kcast::testing
