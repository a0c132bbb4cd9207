#include "io/csv_chunks.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace kcast {
namespace {

std::string joined(const std::vector<std::string_view>& parts) {
  std::string s;
  for (std::string_view p : parts) s += p;
  return s;
}

TEST(CsvChunks, ChunksEndAtLineEndsAndTogetherAreTheRows) {
  std::string rows;
  for (int i = 0; i < 1000; ++i) rows += "row" + std::to_string(i) + ",x\n";
  rows += "last,no newline";
  for (size_t parts : {1u, 2u, 3u, 7u}) {
    const auto chunks = split_at_line_ends(rows, parts);
    EXPECT_EQ(chunks.size(), parts);
    EXPECT_EQ(joined(chunks), rows);
    for (size_t i = 0; i + 1 < chunks.size(); ++i) EXPECT_EQ(chunks[i].back(), '\n') << parts << " " << i;
  }
}

TEST(CsvChunks, FewerChunksWhenLinesAreLongerThanAShare) {
  const std::string rows = std::string(100, 'a') + "\n" + std::string(5, 'b') + "\n";
  const auto chunks = split_at_line_ends(rows, 4);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0], std::string(100, 'a') + "\n");
  EXPECT_EQ(joined(chunks), rows);
  EXPECT_TRUE(split_at_line_ends("", 3).empty());
}

TEST(CsvChunks, ASourceGivesTheHeaderThenTheChunkAcrossShortReads) {
  CsvChunkSource src("h1,h2\n", "a,b\nc,d\n");
  std::string got;
  char buf[3];
  for (int n; (n = src.read(buf, 3)) > 0;) got.append(buf, size_t(n));
  EXPECT_EQ(got, "h1,h2\na,b\nc,d\n");
}

TEST(CsvChunks, OneChunkBelowTwiceTheMinimum) {
  EXPECT_EQ(csv_chunk_count(15, 8), 1u);
  EXPECT_EQ(csv_chunk_count(0, 8), 1u);
  EXPECT_LE(csv_chunk_count(size_t(1) << 40, 8, 3), 3u);
}

}  // namespace
}  // namespace kcast
