// Provenance of an input file: its size and CRC-32, taken from the very bytes that were parsed, so
// a model.json names exactly what it was fitted on (and the file is read once).
#pragma once
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace kcast {

struct FileDigest {
  std::string file;   // as given on the command line ("-" for stdin)
  std::string crc32;  // 8 lowercase hex digits
  size_t bytes = 0;
};

FileDigest digest_of(const std::string& file, const std::string& bytes);
// {"file", "crc32", "bytes", "rows"}: one entry of model.json provenance.inputs.
nlohmann::json provenance_entry(const FileDigest& d, size_t rows);

}  // namespace kcast
