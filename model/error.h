// InputError: bad user input (file, option, value). The message already names the place
// ("FILE:LINE: column 'x': ..."); the CLI prints it after "kcast: " and exits 2.
#pragma once
#include <stdexcept>
#include <string>

namespace kcast {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kcast
