#include "io/file_digest.h"

#include <gtest/gtest.h>

namespace kcast {
namespace {

// The CRC-32 check value of the standard (ISO-HDLC, as zlib and gzip use it): "123456789".
TEST(FileDigest, CrcOfTheStandardCheckString) {
  const FileDigest d = digest_of("x.csv", "123456789");
  EXPECT_EQ(d.crc32, "cbf43926");
  EXPECT_EQ(d.bytes, 9u);
  EXPECT_EQ(d.file, "x.csv");
  EXPECT_EQ(digest_of("empty", "").crc32, "00000000");
}

TEST(FileDigest, ProvenanceEntryCarriesRows) {
  const nlohmann::json e = provenance_entry(digest_of("a.csv", "abc"), 7);
  EXPECT_EQ(e["file"], "a.csv");
  EXPECT_EQ(e["crc32"], "352441c2");  // CRC-32 of "abc"
  EXPECT_EQ(e["bytes"], 3);
  EXPECT_EQ(e["rows"], 7);
}

}  // namespace
}  // namespace kcast
