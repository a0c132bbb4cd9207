// Loads the GPU database (data/gpus.csv, schema in data/gpus.md) into a GpuDatabase.
#pragma once
#include <string>

#include "model/gpu_database.h"

namespace kcast {

// Parses gpus.csv text; `file` names it in errors.
GpuDatabase parse_gpu_database(const std::string& text, const std::string& file);
// The database kcast ships (data/gpus.csv, or $KCAST_DATA_DIR/gpus.csv), loaded once.
const GpuDatabase& default_gpu_database();

}  // namespace kcast
