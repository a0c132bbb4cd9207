#include "calibrate/measured_set.h"

#include <algorithm>

#include "io/atomic_file.h"
#include "io/classifier_rules.h"
#include "io/kernel_list_csv.h"
#include "model/inferred_work.h"

namespace kcast {

MeasuredSet read_measurements(const std::vector<std::string>& files, const GpuDatabase& db) {
  MeasuredSet s;
  KernelListOptions opt{&db, &default_classifier()};
  for (const auto& f : files) {
    s.files.push_back(f);
    const std::string text = read_file(f);
    s.digests.push_back(digest_of(f, text));
    for (Kernel& k : parse_kernel_list(text, f == "-" ? "<stdin>" : f, opt)) {
      if (k.gpu.empty() || !known(k.duration_us)) {
        ++s.skipped;
        continue;
      }
      if (lacks_work(k)) {
        ++s.without_work;
        continue;
      }
      const GpuSpec* g = &db.resolve(k.gpu);
      auto it = std::find(s.gpus.begin(), s.gpus.end(), g);
      size_t gi = size_t(it - s.gpus.begin());
      if (it == s.gpus.end()) s.gpus.push_back(g);
      s.rows.push_back({std::move(k), gi, f});
    }
  }
  return s;
}

std::string without_work_note(const MeasuredSet& s, const std::string& command) {
  if (s.without_work == 0) return "";
  return "kcast " + command + ": left out " + std::to_string(s.without_work) +
         " measured rows without work (no shape, flops or bytes): the model cannot " +
         (command == "calibrate" ? "fit" : "score") + " their durations\n";
}

namespace {

// The rows `keep_row` accepts, on the GPUs `keep_gpu` marks (indexed as s.gpus), re-indexed.
template <typename RowPred>
MeasuredSet subset(const MeasuredSet& s, const std::vector<bool>& keep_gpu, RowPred keep_row) {
  MeasuredSet out;
  out.files = s.files;
  out.digests = s.digests;
  std::vector<long> remap(s.gpus.size(), -1);
  for (size_t i = 0; i < s.gpus.size(); ++i)
    if (keep_gpu[i]) {
      remap[i] = long(out.gpus.size());
      out.gpus.push_back(s.gpus[i]);
    }
  for (const auto& r : s.rows)
    if (remap[r.gpu_index] >= 0 && keep_row(r.kernel))
      out.rows.push_back({r.kernel, size_t(remap[r.gpu_index]), r.file});
  return out;
}

}  // namespace

MeasuredSet filter_gpus(const MeasuredSet& s, const std::vector<std::string>& names, bool keep) {
  std::vector<bool> keep_gpu(s.gpus.size());
  for (size_t i = 0; i < s.gpus.size(); ++i)
    keep_gpu[i] = (std::find(names.begin(), names.end(), s.gpus[i]->name) != names.end()) == keep;
  return subset(s, keep_gpu, [](const Kernel&) { return true; });
}

MeasuredSet filter_classes(const MeasuredSet& s, const std::vector<KernelClass>& classes) {
  auto kept = [&](const Kernel& k) { return std::find(classes.begin(), classes.end(), k.cls) != classes.end(); };
  std::vector<bool> has_row(s.gpus.size(), false);
  for (const auto& r : s.rows) has_row[r.gpu_index] = has_row[r.gpu_index] || kept(r.kernel);
  return subset(s, has_row, kept);
}

}  // namespace kcast
