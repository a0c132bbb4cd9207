// Typed look-ups in a Hugging Face config.json (hf_config.cc, hf_config_families.cc): the first of
// several synonymous keys that is present and not null, each value checked for its type and range,
// every error naming the file and the key.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "model/error.h"

namespace kcast::synth::hf {

using nlohmann::json;

struct Reader {
  const json& j;
  const std::string& file;

  const json* find(std::initializer_list<const char*> keys, std::string* found = nullptr) const {
    for (const char* k : keys) {
      auto it = j.find(k);
      if (it != j.end() && !it->is_null()) {
        if (found) *found = k;
        return &*it;
      }
    }
    return nullptr;
  }
  static std::string names(std::initializer_list<const char*> keys) {
    std::string s;
    for (const char* k : keys) s += std::string(s.empty() ? "'" : ", '") + k + "'";
    return s;
  }
  int64_t integer(std::initializer_list<const char*> keys, int64_t dflt, bool required) const {
    std::string key;
    const json* v = find(keys, &key);
    if (!v) {
      if (required) throw InputError(file + ": missing key " + names(keys));
      return dflt;
    }
    if (!v->is_number_integer() || v->get<int64_t>() <= 0)
      throw InputError(file + ": key '" + key + "': expected a positive integer, got " + v->dump());
    return v->get<int64_t>();
  }
  // A positive real (a soft cap), 0 where absent or null.
  double positive_real(const char* key) const {
    const json* v = find({key});
    if (!v) return 0;
    if (!v->is_number() || v->get<double>() <= 0)
      throw InputError(file + ": key '" + key + "': expected a positive number, got " + v->dump());
    return v->get<double>();
  }
  double number(std::initializer_list<const char*> keys, double dflt) const {
    std::string key;
    const json* v = find(keys, &key);
    if (!v) return dflt;
    if (!v->is_number() || v->get<double>() < 0 || v->get<double>() >= 1)
      throw InputError(file + ": key '" + key + "': expected a probability in [0, 1), got " + v->dump());
    return v->get<double>();
  }
  std::string string(std::initializer_list<const char*> keys, std::string* found = nullptr) const {
    std::string key;
    const json* v = find(keys, &key);
    if (found) *found = key;
    if (!v) return "";
    if (!v->is_string()) throw InputError(file + ": key '" + key + "': expected a string, got " + v->dump());
    return v->get<std::string>();
  }
  bool boolean(const char* key, bool dflt) const {
    const json* v = find({key});
    if (!v) return dflt;
    if (!v->is_boolean()) throw InputError(file + ": key '" + key + "': expected true or false, got " + v->dump());
    return v->get<bool>();
  }
};

}  // namespace kcast::synth::hf
