// Shared option handling for subcommands, on Boost.Program_options: parse, print --help, and turn
// Boost's errors into InputError naming the option.
#pragma once
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "model/gpu_database.h"

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
std::vector<const GpuSpec*> resolve_gpu_list(const GpuDatabase& db, const std::string& list);
// A comma-separated list of integers from `min` to 2^24 (`--batch-sweep B1,B2,...`, `--pp-layout
// L1,L2,...`); an empty or bad item is "option '--OPTION': 'ITEM' is not WHAT".
std::vector<int64_t> parse_int_list(const char* option, const std::string& value, int64_t min,
                                    const std::string& what);
// A kernel list with no rows is an error naming `file`: its prediction, zero, would be silently wrong.
void require_kernel_rows(const std::vector<Kernel>& rows, const std::string& file);

}  // namespace kcast::cli
