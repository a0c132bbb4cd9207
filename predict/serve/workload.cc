#include "predict/serve/workload.h"

#include <cmath>
#include <random>
#include <sstream>

#include "io/atomic_file.h"
#include "io/csv_source.h"
#include "io/json_input.h"
#include "model/error.h"

namespace kcast::serve {

namespace {

constexpr int64_t kMaxTokens = int64_t(1) << 24;

void check_length(int64_t v, const std::string& where, const char* what) {
  if (v <= 0 || v > kMaxTokens)
    throw InputError(where + ": " + what + " must be a positive token count up to 16777216 (got " + std::to_string(v) +
                     ")");
}

using Reader = io::CSVReader<3, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>, io::throw_on_overflow,
                             io::single_and_empty_line_comment<'#'>>;

std::vector<Request> parse_csv(const std::string& text, const std::string& path, bool* has_arrivals) {
  std::vector<Request> out;
  try {
    Reader in(path, std::make_unique<MemoryByteSource>(text));
    in.read_header(io::ignore_extra_column | io::ignore_missing_column, "input_tokens", "output_tokens", "arrival_s");
    for (const char* required : {"input_tokens", "output_tokens"})
      if (!in.has_column(required))
        throw InputError(path + ": missing required column '" + required +
                         "' (expected header input_tokens,output_tokens[,arrival_s])");
    *has_arrivals = in.has_column("arrival_s");
    char *ci = nullptr, *co = nullptr, *ca = nullptr;
    while (in.read_row(ci, co, ca)) {
      const unsigned line = in.get_file_line();
      Request r;
      const CellRef ri{path, line, "input_tokens"}, ro{path, line, "output_tokens"}, ra{path, line, "arrival_s"};
      if (!parse_int_cell(ci, ri, r.input)) throw InputError(ri.where() + ": empty");
      if (!parse_int_cell(co, ro, r.output)) throw InputError(ro.where() + ": empty");
      check_length(r.input, ri.where(), "input_tokens");
      check_length(r.output, ro.where(), "output_tokens");
      if (*has_arrivals) {
        if (!parse_double_cell(ca, ra, r.arrival_s)) *has_arrivals = false;
        else if (!(r.arrival_s >= 0) || !std::isfinite(r.arrival_s))
          throw InputError(ra.where() + ": arrival_s must be a time in seconds, 0 or more");
      }
      out.push_back(r);
    }
  } catch (const io::error::base& e) {
    throw InputError(path + ": " + e.what());
  }
  return out;
}

int64_t json_count(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw InputError(where + ": missing key '" + key + "'");
  const nlohmann::json& v = j[key];
  if (!v.is_number_integer()) throw InputError(where + ": '" + key + "' must be an integer token count");
  const int64_t n = v.get<int64_t>();
  check_length(n, where + ": '" + key + "'", key);
  return n;
}

std::vector<Request> parse_jsonl(const std::string& content, const std::string& path, bool* has_arrivals) {
  std::vector<Request> out;
  std::istringstream text(content);
  std::string line;
  *has_arrivals = true;
  for (unsigned n = 1; std::getline(text, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(n);
    const nlohmann::json j = parse_json_input(line, where);
    if (!j.is_object()) throw InputError(where + ": each line must be a JSON object");
    Request r;
    r.input = json_count(j, "input_tokens", where);
    r.output = json_count(j, "output_tokens", where);
    if (j.contains("arrival_s")) {
      if (!j["arrival_s"].is_number() || !(j["arrival_s"].get<double>() >= 0))
        throw InputError(where + ": 'arrival_s' must be a time in seconds, 0 or more");
      r.arrival_s = j["arrival_s"].get<double>();
    } else {
      *has_arrivals = false;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace

std::vector<Request> fixed_requests(int64_t n, int64_t input, int64_t output) {
  Request r;
  r.input = input;
  r.output = output;
  return std::vector<Request>(size_t(n), r);
}

std::vector<Request> read_dataset(const std::string& path, bool* has_arrivals) {
  if (!path.ends_with(".csv") && !path.ends_with(".jsonl") && !path.ends_with(".json"))
    throw InputError("option '--dataset': " + path + ": give a .csv or .jsonl file");
  return parse_dataset(read_file(path), path, has_arrivals);
}

std::vector<Request> parse_dataset(const std::string& text, const std::string& name, bool* has_arrivals) {
  bool arrivals = false;
  std::vector<Request> out = name.ends_with(".csv") ? parse_csv(text, name, &arrivals) : parse_jsonl(text, name, &arrivals);
  if (out.empty()) throw InputError(name + ": no requests");
  if (has_arrivals) *has_arrivals = arrivals;
  return out;
}

void assign_arrivals(std::vector<Request>& reqs, const Load& load, uint64_t seed) {
  if (load.concurrency > 0 || load.dataset_arrivals) return;
  std::mt19937_64 rng(seed);
  double t = 0;
  for (Request& r : reqs) {
    r.arrival_s = t;
    if (load.infinite_rate) continue;
    if (load.poisson) {
      // An exponential gap by inversion of a 53-bit uniform: the same numbers from every standard library.
      const double u = double(rng() >> 11) * 0x1.0p-53;
      t += -std::log1p(-u) / load.rate;
    } else {
      t += 1.0 / load.rate;
    }
  }
}

}  // namespace kcast::serve
