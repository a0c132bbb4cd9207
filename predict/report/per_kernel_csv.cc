#include "predict/report/per_kernel_csv.h"

#include <charconv>
#include <stdexcept>

#include "predict/report/text_util.h"

namespace kcast {

namespace {

void put_double(std::string& buf, double v) {
  if (!known(v)) return;
  char b[32];
  auto [end, ec] = std::to_chars(b, b + sizeof b, v, std::chars_format::general, 9);
  buf.append(b, end);
}

}  // namespace

void write_per_kernel_csv(const PreparedWorkload& w, const std::vector<GpuPrediction>& preds,
                          const std::vector<GpuCaps>& caps, std::ostream& out) {
  const KernelRows& rows = w.rows;
  for (const auto& p : preds)
    if (p.row_us.size() != rows.size()) throw std::logic_error("per-kernel output needs keep_rows predictions");
  if (caps.size() != preds.size()) throw std::logic_error("per-kernel output needs each target's caps");
  // The model's terms, once per distinct kernel and target.
  std::vector<std::vector<KernelTerms>> terms(preds.size(), std::vector<KernelTerms>(w.kernels.size()));
  for (size_t g = 0; g < preds.size(); ++g)
    for (size_t u = 0; u < w.kernels.size(); ++u) w.model->predict(w.kernels[u], caps[g], &terms[g][u]);
  std::vector<std::string> gpu_cells;
  for (const auto& p : preds) gpu_cells.push_back(report::csv_cell(p.gpu));
  std::string buf =
      "row,target_gpu,name,class,predicted_us,bound,measured_us,mode,source_gpu,"
      "model_compute_us,model_memory_us,model_latency_us,floor_us,extra_us,tile,split_k,waves\n";
  std::string name_cell;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Kernel& k = rows.kind(r);
    if (r == 0 || rows.kind_of(r) != rows.kind_of(r - 1)) name_cell = report::csv_cell(k.name);
    const int s = w.source_of_row[r];
    for (size_t g = 0; g < preds.size(); ++g) {
      const GpuPrediction& p = preds[g];
      char num[24];
      auto [end, ec] = std::to_chars(num, num + sizeof num, r);
      buf.append(num, end);
      buf += ',';
      buf += gpu_cells[g];
      buf += ',';
      buf += name_cell;
      buf += ',';
      buf += to_string(k.cls);
      buf += ',';
      put_double(buf, p.row_us[r]);
      buf += ',';
      buf += to_string(Bound(p.row_bound[r]));
      buf += ',';
      put_double(buf, rows.duration_us(r));
      buf += p.row_transferred[r] ? ",transfer," : ",absolute,";
      if (p.row_transferred[r]) buf += report::csv_cell(w.sources[s]);
      const KernelTerms& t = terms[g][w.uniq.of_row[r]];
      for (double v : {t.compute_us, t.memory_us, t.latency_us, t.floor_us, t.extra_us}) {
        buf += ',';
        put_double(buf, v);
      }
      buf += ',';
      if (t.tile_m > 0) buf += std::to_string(t.tile_m) + "x" + std::to_string(t.tile_n) + "," +
                               std::to_string(t.split_k) + ",";
      else buf += ",,";
      if (t.tile_m > 0) put_double(buf, t.waves);
      buf += '\n';
    }
    if (buf.size() > (1u << 20)) {
      out.write(buf.data(), std::streamsize(buf.size()));
      buf.clear();
    }
  }
  out.write(buf.data(), std::streamsize(buf.size()));
}

}  // namespace kcast
