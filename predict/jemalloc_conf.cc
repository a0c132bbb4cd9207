// jemalloc's settings for the kcast binary, read by jemalloc at its first allocation (the documented
// `malloc_conf` global; the MALLOC_CONF environment variable still overrides it). Compiled only when
// the binary links jemalloc (CMakeLists.txt, KCAST_JEMALLOC).
//   thp:always          back jemalloc's memory with transparent huge pages even where the system
//                       leaves them to madvise: one fault per 2 MiB instead of per 4 KiB page.
//   metadata_thp:auto   the same for its own metadata once it grows.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:auto,oversize_threshold:0";
}
