// Helpers the trace readers share: the GPU database / classifier / warning hooks of ImportOptions, a
// per-file device resolver, number and unit parsing, copy-name spelling, and array adaptors for
// fast-cpp-csv-parser's variadic read_header / read_row.
#pragma once
#include <csv.h>

#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "model/classifier.h"
#include "model/gpu_database.h"
#include "predict/import/import.h"

namespace kcast::import_detail {

const GpuDatabase& gpu_db(const ImportOptions& opt);
const Classifier& classifier(const ImportOptions& opt);
void warn(const ImportOptions& opt, const std::string& msg);

// Turns the device names a trace records into canonical GPU names, once per distinct name.
// --gpu wins over the trace. A device that resolves by neither name nor properties leaves the gpu
// column empty and says so once (the list is still useful for prediction).
class DeviceResolver {
 public:
  DeviceResolver(const ImportOptions& opt, std::string file);
  const std::string& resolve(const std::string& device, const DeviceProps& props = {});
  bool overridden() const { return !override_.empty(); }
  const std::string& override_name() const { return override_; }

 private:
  const ImportOptions& opt_;
  std::string file_;
  std::string override_;
  std::mutex mutex_;  // readers that parse on several threads share one resolver
  std::map<std::string, std::string> cache_;
  std::string empty_;
};

// Number cells: surrounding spaces trimmed; thousands separators ("1,234.5") dropped when
// `thousands`; "" / "n/a" / "-" are not given (returns empty). bad == true when the text is not a
// finite number.
struct Num {
  bool given = false;
  bool bad = false;
  double value = 0;
};
Num parse_num(std::string_view s, bool thousands = false);
// The same for a NUL-terminated cell, with an inline path for plain integers (the common cell of a
// million-row trace), which spares the length scan and the trimming.
inline Num parse_num_cell(const char* p, bool thousands = false) {
  // Exact powers of ten: an integer below 2^53 divided by one is correctly rounded, so "0.049"
  // parses to the same double as from_chars would give.
  static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
                                      1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const char* q = p + (*p == '-');
  const char* const digits = q;
  int64_t v = 0;
  while (unsigned(*q - '0') <= 9 && q - digits < 15) v = v * 10 + (*q++ - '0');
  int frac = 0;
  if (*q == '.' && q != digits) {
    ++q;
    while (unsigned(*q - '0') <= 9 && q - digits < 16) v = v * 10 + (*q++ - '0'), ++frac;
  }
  if (*q == '\0' && q != digits && q[-1] != '.') {
    const double x = frac ? double(v) / kPow10[frac] : double(v);
    return Num{true, false, *p == '-' ? -x : x};
  }
  return parse_num(std::string_view(p), thousands);
}

// Multipliers to microseconds / bytes for the unit spellings of nsys ("ns", "us") and ncu
// ("nsecond", "usecond", "Kbyte"); 0 when unknown. Decimal prefixes (MB = 10^6 B) as both tools use.
double time_unit_to_us(std::string_view unit);
double bytes_unit_scale(std::string_view unit);

// "[CUDA memcpy HtoD]" (old nsys) -> "[CUDA memcpy Host-to-Device]" (current), so lists from
// different nsys versions aggregate and compare alike. Other names are returned unchanged.
std::string canonical_copy_name(std::string_view name);
// The nsys name of a CUPTI memcpy kind (ENUM_CUDA_MEMCPY_OPER / CUpti_ActivityMemcpyKind).
std::string copy_kind_name(int64_t kind);

std::string trim(std::string_view s);

// The math type a kernel's name announces (fp16 in ampere_fp16_s16816gemm_fp16, bf16, tf32, fp8
// e4m3, c10::Half, double, ...); nullopt when it names none (then the default fp32 stands).
std::optional<DType> dtype_from_kernel_name(std::string_view name);

// Reports may follow lines that are not CSV (tool banners, the application's own stdout): the index
// (0-based) of the first line of `head` that `is_header` accepts, found with io::LineReader.
// InputError "<name>: <not_found>" when there is none; "<name>: empty file" for an empty head.
constexpr size_t kHeadBytes = 1 << 20;
unsigned find_header_line(const std::string& head, const std::string& name,
                          bool (*is_header)(std::string_view), const std::string& not_found);
// The first kHeadBytes of a file.
std::string read_head(const std::string& path);

// fast-cpp-csv-parser takes columns as variadic arguments; these adapt fixed arrays.
template <class Reader, size_t N, size_t... I>
void read_header_array(Reader& r, const std::array<const char*, N>& names, std::index_sequence<I...>) {
  r.read_header(io::ignore_extra_column | io::ignore_missing_column, names[I]...);
}
template <class Reader, size_t N, size_t... I>
bool read_row_array(Reader& r, std::array<char*, N>& cells, std::index_sequence<I...>) {
  return r.read_row(cells[I]...);
}

}  // namespace kcast::import_detail
