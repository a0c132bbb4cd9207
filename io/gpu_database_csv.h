// Loads the GPU database (data/gpus.csv, schema in data/gpus.md) into a GpuDatabase.
#pragma once
#include <string>

#include "model/gpu_database.h"

namespace kcast {

// Parses gpus.csv text; `file` names it in errors.
GpuDatabase parse_gpu_database(const std::string& text, const std::string& file);
// `base` with the rows of the gpus.csv-schema files in `paths` (colon-separated; any subset of the
// columns, with name, sm_count, boost_clock_mhz, dram_bw_gbps and fp32_tflops): a row naming one of
// base's GPUs (or an alias) replaces its figures under its name and aliases, any other is added.
// Errors name the file, line and column.
GpuDatabase with_extra_gpus(const GpuDatabase& base, const std::string& paths);
// The database kcast ships (data/gpus.csv, or $KCAST_DATA_DIR/gpus.csv) with the files of
// $KCAST_GPUS added (with_extra_gpus: GPUs that do not exist yet, or a board's own figures), loaded once.
const GpuDatabase& default_gpu_database();

}  // namespace kcast
