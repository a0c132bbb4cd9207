#include "io/gpu_database_csv.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "io/csv_source.h"
#include "io/embedded_data.h"
#include "model/error.h"

namespace kcast {

GpuDatabase parse_gpu_database(const std::string& text, const std::string& file) {
  using Reader = io::CSVReader<29, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>>;
  std::vector<GpuSpec> gpus;
  try {
    Reader in(file, std::make_unique<MemoryByteSource>(text));
    in.read_header(io::ignore_extra_column | io::ignore_missing_column, "name", "aliases", "vendor",
                   "arch", "compute_capability", "release_year", "sm_count", "boost_clock_mhz",
                   "memory_gb", "dram_bw_gbps", "l2_mb", "fp64_tflops", "fp32_tflops", "tf32_tflops",
                   "fp16_tflops", "bf16_tflops", "fp8_tflops", "int8_tops", "tensor_cores", "tdp_w",
                   "link_gbps", "host_gbps", "source", "uncertain", "fp4_tflops", "net_gbps", "domain_size",
                   "announced", "interconnect_source");
    if (!in.has_column("name")) throw InputError(file + ":1: missing column 'name'");
    char *name, *aliases, *vendor, *arch, *cc, *year, *sms, *clock, *mem, *bw, *l2, *f64, *f32,
        *tf32, *f16, *bf16, *f8, *i8, *tc, *tdp, *link, *host, *source, *uncertain, *f4, *net, *domain,
        *announced, *link_source;
    name = aliases = vendor = arch = cc = year = sms = clock = mem = bw = l2 = f64 = f32 = tf32 =
        f16 = bf16 = f8 = i8 = tc = tdp = link = host = source = uncertain = f4 = net = domain = announced =
            link_source = nullptr;
    while (in.read_row(name, aliases, vendor, arch, cc, year, sms, clock, mem, bw, l2, f64, f32, tf32,
                       f16, bf16, f8, i8, tc, tdp, link, host, source, uncertain, f4, net, domain, announced,
                       link_source)) {
      const unsigned line = in.get_file_line();
      auto num = [&](const char* t, const char* col, double& out) {
        parse_double_cell(t, CellRef{file, line, col}, out);
      };
      GpuSpec g;
      g.name = name ? name : "";
      if (g.name.empty()) throw InputError(file + ":" + std::to_string(line) + ": column 'name': empty");
      std::stringstream as(aliases ? aliases : "");
      for (std::string a; std::getline(as, a, ';');)
        if (!a.empty()) g.aliases.push_back(a);
      g.vendor = vendor ? vendor : "";
      g.arch = arch ? arch : "";
      g.compute_capability = cc ? cc : "";
      int64_t iv = 0;
      if (parse_int_cell(year, CellRef{file, line, "release_year"}, iv)) g.release_year = int(iv);
      if (parse_int_cell(sms, CellRef{file, line, "sm_count"}, iv)) g.sm_count = int(iv);
      if (g.sm_count <= 0)
        throw InputError(CellRef{file, line, "sm_count"}.where() + ": must be a positive integer");
      num(clock, "boost_clock_mhz", g.boost_clock_mhz);
      num(mem, "memory_gb", g.memory_gb);
      num(bw, "dram_bw_gbps", g.dram_bw_gbps);
      num(l2, "l2_mb", g.l2_mb);
      num(f64, "fp64_tflops", g.fp64_tflops);
      num(f32, "fp32_tflops", g.fp32_tflops);
      num(tf32, "tf32_tflops", g.tf32_tflops);
      num(f16, "fp16_tflops", g.fp16_tflops);
      num(bf16, "bf16_tflops", g.bf16_tflops);
      num(f8, "fp8_tflops", g.fp8_tflops);
      num(i8, "int8_tops", g.int8_tops);
      num(f4, "fp4_tflops", g.fp4_tflops);
      num(tdp, "tdp_w", g.tdp_w);
      num(link, "link_gbps", g.link_gbps);
      num(host, "host_gbps", g.host_gbps);
      num(net, "net_gbps", g.net_gbps);
      for (const auto& [v, col] : {std::pair{g.link_gbps, "link_gbps"}, std::pair{g.host_gbps, "host_gbps"},
                                   std::pair{g.net_gbps, "net_gbps"}})
        if (known(v) && !(v > 0)) throw InputError(CellRef{file, line, col}.where() + ": must be > 0 (or empty)");
      if (parse_int_cell(domain, CellRef{file, line, "domain_size"}, iv)) {
        if (iv < 1) throw InputError(CellRef{file, line, "domain_size"}.where() + ": must be a positive integer (or empty)");
        g.domain_size = int(iv);
      }
      if (parse_int_cell(announced, CellRef{file, line, "announced"}, iv)) g.announced = iv != 0;
      g.interconnect_source = link_source ? link_source : "";
      if (parse_int_cell(tc, CellRef{file, line, "tensor_cores"}, iv)) g.tensor_cores = iv != 0;
      if (!known(g.dram_bw_gbps) || !known(g.fp32_tflops) || !known(g.boost_clock_mhz))
        throw InputError(file + ":" + std::to_string(line) + ": GPU '" + g.name +
                         "' needs dram_bw_gbps, fp32_tflops and boost_clock_mhz");
      g.source = source ? source : "";
      g.uncertain = uncertain ? uncertain : "";
      gpus.push_back(std::move(g));
    }
  } catch (const io::error::base& e) {
    throw InputError(std::string(e.what()));
  }
  if (gpus.empty()) throw InputError(file + ": no GPUs");
  return GpuDatabase(std::move(gpus));
}

GpuDatabase with_extra_gpus(const GpuDatabase& base, const std::string& paths) {
  std::vector<GpuSpec> gpus = base.all();
  size_t from = 0;
  while (from <= paths.size()) {
    const size_t colon = paths.find(':', from);
    const std::string path = paths.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
    from = colon == std::string::npos ? paths.size() + 1 : colon + 1;
    if (path.empty()) continue;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("KCAST_GPUS: " + path + ": cannot read");
    std::ostringstream text;
    text << in.rdbuf();
    const GpuDatabase extra = parse_gpu_database(text.str(), path);
    for (const GpuSpec& g : extra.all()) {
      // A row naming a shipped GPU (its name or an alias) replaces its figures, under the shipped name
      // and aliases (so every name that resolved to it still does); any other row is added.
      const GpuDatabase current(gpus);
      if (const GpuSpec* same = current.find(g.name)) {
        GpuSpec& slot = gpus[size_t(same - current.all().data())];
        GpuSpec row = g;
        row.name = slot.name;
        row.aliases = slot.aliases;
        if (g.name != slot.name && std::find(row.aliases.begin(), row.aliases.end(), g.name) == row.aliases.end())
          row.aliases.push_back(g.name);
        slot = std::move(row);
      } else {
        gpus.push_back(g);
      }
    }
  }
  return GpuDatabase(std::move(gpus));
}

const GpuDatabase& default_gpu_database() {
  static const GpuDatabase db = [] {
    GpuDatabase shipped = parse_gpu_database(data_file("gpus.csv"), "data/gpus.csv");
    const char* extra = std::getenv("KCAST_GPUS");
    return extra && *extra ? with_extra_gpus(shipped, extra) : shipped;
  }();
  return db;
}

}  // namespace kcast
