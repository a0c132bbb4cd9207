// Parsing a JSON input file (model.json, a PyTorch profiler trace, a Hugging Face config): every
// way the parser can reject the text - a syntax error, a number too large for a double - becomes an
// InputError naming the file (and the byte, for syntax errors), never an escaped exception.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "model/error.h"

namespace kcast {

nlohmann::json parse_json_input(const std::string& text, const std::string& file);

// The InputError a parser's exception becomes: "FILE: invalid JSON (byte N): ..." for a syntax error,
// "FILE: invalid JSON: ..." otherwise (streaming readers report their parser's errors through it too).
InputError json_input_error(const std::string& file, const nlohmann::json::exception& e);

}  // namespace kcast
