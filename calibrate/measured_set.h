// MeasuredSet: measured kernels prepared for fitting and scoring: each row's GPU resolved to its
// capabilities under a given model, so scoring and fitting evaluate the model without look-ups.
#pragma once
#include <string>
#include <vector>

#include "io/file_digest.h"
#include "calibrate/model_file.h"
#include "model/gpu_database.h"
#include "model/kernel.h"

namespace kcast {

struct MeasuredRow {
  Kernel kernel;
  size_t gpu_index;     // into MeasuredSet::gpus
  std::string file;     // source file, for provenance
};

struct MeasuredSet {
  std::vector<const GpuSpec*> gpus;  // distinct GPUs that appear
  std::vector<MeasuredRow> rows;     // rows with a duration and a GPU
  std::vector<std::string> files;
  std::vector<FileDigest> digests;  // one per file, of the bytes parsed
  size_t skipped = 0;  // rows without duration_us or gpu
  // Measured rows without shape, flops or bytes (an Nsight Systems kernel): the model predicts them
  // at the launch floor whatever their duration, so fitting them would drag the floor up and scoring
  // them would score the floor. Left out; `kcast calibrate` and `validate` say how many.
  size_t without_work = 0;
};

// "" or the note `command` prints about the rows left out for having no work.
std::string without_work_note(const MeasuredSet& s, const std::string& command);

// Reads kernel lists (each once: the digest is of the parsed bytes); keeps rows that have both
// `gpu` and `duration_us`, and work (shape, flops or bytes).
MeasuredSet read_measurements(const std::vector<std::string>& files, const GpuDatabase& db);

// The same set restricted to rows whose GPU is (keep=true) or is not (keep=false) in `names`.
MeasuredSet filter_gpus(const MeasuredSet& s, const std::vector<std::string>& names, bool keep);

// The same set restricted to rows of the given kernel classes (and the GPUs that keep a row).
MeasuredSet filter_classes(const MeasuredSet& s, const std::vector<KernelClass>& classes);

}  // namespace kcast
