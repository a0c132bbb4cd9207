// libFuzzer target: arbitrary bytes into the kcast-csv kernel-list reader (parse_kernel_list, the input
// of predict, whatif, calibrate and validate), and every row it accepts through the cost model on one
// GPU. Bad input must end in kcast::InputError; an accepted row must predict a time that is a number
// and not negative. Any other exception, crash or sanitizer report is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/classifier_rules.h"
#include "io/gpu_database_csv.h"
#include "io/kernel_list_csv.h"
#include "calibrate/model_file.h"
#include "model/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kcast::LoadedModel& lm = kcast::default_model();
  static const kcast::GpuDatabase& db = kcast::default_gpu_database();
  static const kcast::GpuCaps caps = lm.caps_for(db.resolve("H100-SXM"));
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<kcast::Kernel> kernels;
  try {
    kernels = kcast::parse_kernel_list(text, "fuzz.csv", kcast::KernelListOptions{&db, &kcast::default_classifier()});
  } catch (const kcast::InputError&) {
    return 0;
  }
  for (const kcast::Kernel& k : kernels) {
    const double t = lm.model.predict(k, caps).time_us;
    if (std::isnan(t) || t < 0) std::abort();
  }
  return 0;
}
