// Files under data/ compiled into the binary (see cmake/embed.cmake). Lets kcast run from any
// directory. KCAST_DATA_DIR, when set, takes precedence so a user can swap in an edited database.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kcast {

// Contents of data/<path> as compiled in; empty view when absent.
std::string_view embedded_file(std::string_view path);
// Every embedded file's path under data/ (e.g. "gpus.csv", "synth/llama3-70b.json").
std::vector<std::string_view> embedded_paths();
// data/<path>: from $KCAST_DATA_DIR if set and the file exists there, else the embedded copy.
// Throws InputError when neither has it.
std::string data_file(std::string_view path);

}  // namespace kcast
