#include "io/json_input.h"

namespace kcast {

InputError json_input_error(const std::string& file, const nlohmann::json::exception& e) {
  std::string msg = e.what();
  if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
  if (const auto* syntax = dynamic_cast<const nlohmann::json::parse_error*>(&e))
    return InputError(file + ": invalid JSON (byte " + std::to_string(syntax->byte) + "): " + msg);
  return InputError(file + ": invalid JSON: " + msg);  // e.g. out_of_range: a number overflowing a double
}

nlohmann::json parse_json_input(const std::string& text, const std::string& file) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw json_input_error(file, e);
  }
}

}  // namespace kcast
