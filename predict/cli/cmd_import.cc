// `kcast import INPUT [--from FORMAT] [--gpu NAME] [-o OUT.csv] [--aggregate] [step selection]`
// (docs/cli-contract.md): converts a trace to the native kernel list; stdout without -o, else written atomically.
#include <functional>
#include <iostream>
#include <mutex>

#include "io/atomic_file.h"
#include "io/console.h"
#include "io/kernel_list_csv.h"
#include "model/error.h"
#include "predict/cli/commands.h"
#include "predict/cli/options.h"
#include "predict/import/import.h"

namespace kcast::cli {

int cmd_import(int argc, char** argv) {
  po::options_description opts("kcast import options");
  std::string input, from = "auto", gpu, out, nvtx, annotation;
  int instance = 1;
  unsigned threads = 0;
  int64_t step = -1;
  opts.add_options()
      ("input", po::value(&input), "trace file, or - for stdin")
      ("from", po::value(&from)->default_value("auto"),
       "input format: auto, nsys-sqlite, nsys-csv, ncu-csv, kineto-json, kcast-csv")
      ("gpu", po::value(&gpu), "GPU the trace was taken on (overrides the device the trace records)")
      ("output,o", po::value(&out), "output kernel-list CSV (default: stdout)")
      ("aggregate", "merge identical kernels into one row with a count and the mean duration")
      ("nvtx", po::value(&nvtx), "nsys-sqlite: keep kernels that start inside this NVTX range")
      ("nvtx-instance", po::value(&instance)->default_value(1),
       "which occurrence (1-based) of the --nvtx / --annotation range")
      ("profiler-step", po::value(&step), "kineto-json: keep kernels launched in ProfilerStep#N")
      ("annotation", po::value(&annotation),
       "kineto-json: keep kernels of this user_annotation / gpu_user_annotation range")
      ("threads", po::value(&threads)->default_value(0),
       "threads for large nsys-csv files (0 = one per core)");
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "kcast import INPUT [--from FORMAT] [--gpu NAME] [-o OUT.csv] [--aggregate]\n"
                     "       [--nvtx NAME [--nvtx-instance N] | --profiler-step N | --annotation NAME]",
                     opts, pos, vm))
    return 0;
  if (input.empty()) throw InputError("import: missing INPUT (see 'kcast import --help')");
  auto format = parse_trace_format(from);
  if (!format)
    throw InputError("option '--from': '" + from +
                     "' is not one of auto, nsys-sqlite, nsys-csv, ncu-csv, kineto-json, kcast-csv");
  if (instance < 1) throw InputError("option '--nvtx-instance': must be 1 or more");
  if (vm.count("profiler-step") && step < 0)
    throw InputError("option '--profiler-step': must not be negative");
  if ((!nvtx.empty()) + (step >= 0) + (!annotation.empty()) > 1)
    throw InputError("options '--nvtx', '--profiler-step' and '--annotation' exclude each other");

  ImportOptions opt;
  opt.gpu = gpu;
  opt.step.nvtx = nvtx;
  opt.step.instance = instance;
  opt.step.profiler_step = step;
  opt.step.annotation = annotation;
  opt.threads = threads;
  const bool aggregate = vm.count("aggregate") > 0;
  auto emit = [&](const std::function<void(std::ostream&)>& write) {
    if (out.empty() || out == "-") {
      write(console_out());
      console_out().flush();
      if (!console_out()) throw InputError("<stdout>: write failed");
    } else {
      write_file_atomically(out, write);
    }
  };
  // Every row kept from a file: formatted as read, and written as is when the trace lists its rows in
  // start order (as Nsight Systems does); otherwise read again, collected and sorted. Into a file the
  // text streams out as it is read (KernelListText): a trace out of start order is found out on the
  // way, its partial file discarded, the existing output untouched. Standard input cannot be read
  // twice: it is collected.
  bool read_once = false;
  if (!aggregate && input != "-") {
    if (!out.empty() && out != "-") {
      // Its warnings held until the read completes: a read cut short says them on the second.
      std::vector<std::string> said;
      std::mutex said_mu;
      ImportOptions first = opt;
      first.warn = [&](const std::string& m) {
        std::lock_guard<std::mutex> lock(said_mu);
        said.push_back(m);
      };
      try {
        write_file_atomically(out, [&](std::ostream& o) {
          KernelListText text(&o);
          read_trace(input, *format, first, text);
          text.finish();
        });
        for (const std::string& m : said) console_err() << "kcast: warning: " << m << "\n";
        return 0;
      } catch (const KernelListText::OutOfStartOrder&) {
      }
    } else {
      KernelListText text;
      read_trace(input, *format, opt, text);
      if (text.in_start_order()) {
        emit([&](std::ostream& o) { text.write(o); });
        return 0;
      }
      read_once = true;
    }
  }
  ImportOptions again = opt;
  if (read_once) again.warn = [](const std::string&) {};  // said on the first read
  const std::vector<Kernel> kernels = import_trace(input, *format, again, aggregate);
  emit([&](std::ostream& o) { write_kernel_list(kernels, o); });
  return 0;
}

}  // namespace kcast::cli
