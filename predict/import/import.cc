// import_trace(): reads a trace in a given (or detected) format into a kernel list, plain or
// aggregated; plus the kcast-csv pass-through reader.
#include "io/atomic_file.h"
#include "io/kernel_list_csv.h"
#include "model/error.h"
#include "predict/import/import.h"
#include "predict/import/import_util.h"

namespace kcast {

using namespace import_detail;

namespace {

void reject_step_selection(const ImportOptions& opt, const std::string& file, std::string_view fmt) {
  if (opt.step.any())
    throw InputError(file + ": step selection (--nvtx / --profiler-step / --annotation) is not "
                     "available for " + std::string(fmt) + " input");
}

void pass_through(std::vector<Kernel> kernels, const std::string& file, const ImportOptions& opt,
                  KernelSink& sink) {
  DeviceResolver devices(opt, file);
  for (Kernel& k : kernels) {
    if (devices.overridden()) k.gpu = devices.override_name();
    sink.add(std::move(k));
  }
}

}  // namespace

void read_kcast_csv(const std::string& path, const ImportOptions& opt, KernelSink& sink) {
  reject_step_selection(opt, path, "kcast-csv");
  KernelListOptions ko{&gpu_db(opt), &classifier(opt)};
  pass_through(read_kernel_list(path, ko), path, opt, sink);
}

void read_trace(const std::string& path, TraceFormat format, const ImportOptions& opt, KernelSink& sink) {
  if (path == "-") {
    const std::string name = "<stdin>";
    const std::string bytes = read_file("-");
    if (format == TraceFormat::automatic) format = detect_format_bytes(bytes, name);
    switch (format) {
      case TraceFormat::nsys_sqlite: parse_nsys_sqlite(bytes, name, opt, sink); break;
      case TraceFormat::nsys_csv: parse_nsys_csv(bytes, name, opt, sink); break;
      case TraceFormat::ncu_csv: parse_ncu_csv(bytes, name, opt, sink); break;
      case TraceFormat::kineto_json: parse_kineto_json(bytes, name, opt, sink); break;
      case TraceFormat::kcast_csv: {
        reject_step_selection(opt, name, "kcast-csv");
        KernelListOptions ko{&gpu_db(opt), &classifier(opt)};
        pass_through(parse_kernel_list(bytes, name, ko), name, opt, sink);
        break;
      }
      case TraceFormat::automatic: break;
    }
  } else {
    if (format == TraceFormat::automatic) format = detect_format(path);
    switch (format) {
      case TraceFormat::nsys_sqlite: read_nsys_sqlite(path, opt, sink); break;
      case TraceFormat::nsys_csv: read_nsys_csv(path, opt, sink); break;
      case TraceFormat::ncu_csv: read_ncu_csv(path, opt, sink); break;
      case TraceFormat::kineto_json: read_kineto_json(path, opt, sink); break;
      case TraceFormat::kcast_csv: read_kcast_csv(path, opt, sink); break;
      case TraceFormat::automatic: break;
    }
  }
}

std::vector<Kernel> import_trace(const std::string& path, TraceFormat format,
                                 const ImportOptions& opt, bool aggregate) {
  KernelCollector collector;
  KernelAggregator aggregator;
  KernelSink& sink = aggregate ? static_cast<KernelSink&>(aggregator) : collector;
  read_trace(path, format, opt, sink);
  return aggregate ? aggregator.take() : collector.take();
}

}  // namespace kcast
