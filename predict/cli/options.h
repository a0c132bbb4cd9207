// Shared option handling for subcommands, on Boost.Program_options: parse, print --help, and turn
// Boost's errors into InputError naming the option.
#pragma once
#include <boost/program_options.hpp>
#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "model/dtype.h"
#include "model/error.h"
#include "model/gpu_database.h"
#include "model/kernel_rows.h"

namespace kcast::cli {

namespace po = boost::program_options;

// Parses argv (argv[0] is the subcommand name). Returns false when --help was printed.
bool parse_options(int argc, char** argv, const std::string& usage, po::options_description& opts,
                   const po::positional_options_description& pos, po::variables_map& vm);

// Output format option shared by reporting commands.
enum class Format { table, csv, json };
Format parse_format(const std::string& s);

// The GPUs of a `--gpu NAME[,NAME...]` value (`all`: every database GPU); an empty or unknown name is
// an error naming the option.
// Says so on stderr for each announced GPU (its figures are the vendor's preliminary ones).
std::vector<const GpuSpec*> resolve_gpu_list(const GpuDatabase& db, const std::string& list);
// GPUs per node (the scale-up domain the GPU-to-GPU link reaches) for a layout of `layout_gpus` GPUs on
// `gpus`, where --gpus-per-node was not given: their database domain_size. An error naming the option
// when a layout larger than one GPU meets a GPU without that figure, or GPUs whose domains differ
// and one of them is smaller than the layout (the collectives would cross nodes on some, not others).
int64_t domain_gpus_per_node(const std::vector<const GpuSpec*>& gpus, int64_t layout_gpus);
// One stderr line when `g` is announced, not shipping; nothing otherwise.
void note_if_announced(const GpuSpec& g);
// `"announced": true` in a result's JSON for an announced GPU; nothing for the others, whose JSON
// stays as it was.
void mark_announced(nlohmann::json& j, const GpuSpec& g);
// A comma-separated list of integers from `min` to 2^24 (`--batch-sweep B1,B2,...`, `--pp-layout
// L1,L2,...`); an empty or bad item is "option '--OPTION': 'ITEM' is not WHAT".
std::vector<int64_t> parse_int_list(const char* option, const std::string& value, int64_t min,
                                    const std::string& what);
// The choice a string option names; anything else is an error naming the option and the choices.
template <class E>
E pick(const std::string& option, const std::string& value,
       std::initializer_list<std::pair<const char*, E>> choices) {
  std::string names;
  for (const auto& [name, v] : choices) {
    if (value == name) return v;
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  throw InputError("option '--" + option + "': '" + value + "' is not one of " + names);
}

// An integer option from 1 to 2^24, or `fallback` when it is not given; anything else is an error
// naming the option and the value.
int64_t positive_int(const po::variables_map& vm, const char* option, int64_t fallback);
// A positive number option, or `fallback` when not given; else an error "option '--OPTION': WHAT".
double positive_number(const po::variables_map& vm, const char* option, double fallback, const char* what);

// The dtype a dtype option names; an unknown name is an error naming the option.
DType dtype_named(const char* option, const std::string& name);

// A kernel list with no rows is an error naming `file`: its prediction, zero, would be silently wrong.
void require_kernel_rows(const KernelRows& rows, const std::string& file);

}  // namespace kcast::cli
