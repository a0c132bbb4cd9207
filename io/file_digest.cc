#include "io/file_digest.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>

namespace kcast {

FileDigest digest_of(const std::string& file, const std::string& bytes) {
  // zlib takes lengths as uInt: feed files over 4 GiB in pieces.
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t at = 0; at < bytes.size();) {
    const size_t n = std::min<size_t>(bytes.size() - at, 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), uInt(n));
    at += n;
  }
  char hex[16];
  std::snprintf(hex, sizeof hex, "%08lx", crc);
  return {file, hex, bytes.size()};
}

nlohmann::json provenance_entry(const FileDigest& d, size_t rows) {
  return {{"file", d.file}, {"crc32", d.crc32}, {"bytes", d.bytes}, {"rows", rows}};
}

}  // namespace kcast
