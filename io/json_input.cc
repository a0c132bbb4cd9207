#include "io/json_input.h"

#include "model/error.h"

namespace kcast {

nlohmann::json parse_json_input(const std::string& text, const std::string& file) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    throw InputError(file + ": invalid JSON (byte " + std::to_string(e.byte) + "): " + msg);
  } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range: a number overflowing a double
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    throw InputError(file + ": invalid JSON: " + msg);
  }
}

}  // namespace kcast
