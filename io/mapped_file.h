// A file's bytes mapped into memory, read-only: a large kernel list is parsed where the page cache
// holds it, in chunks on several threads, with no read() copy.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace kcast {

class MappedFile {
 public:
  // An empty mapping (valid() false) where the file cannot be mapped: not a regular file (a pipe,
  // /dev/stdin), empty, or a system without mmap. Callers then read it as a stream.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool valid() const { return data_ != nullptr; }
  std::string_view bytes() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// Asks the kernel to back [p, p + bytes) with transparent huge pages where it can (Linux,
// MADV_HUGEPAGE; a no-op elsewhere). For buffers of hundreds of MB filled once: on the virtual
// machines this project is measured on, a page fault per 4 KiB page was a quarter of the time
// `kcast predict` took to read a million-row list.
void advise_huge_pages(const void* p, size_t bytes);

}  // namespace kcast
