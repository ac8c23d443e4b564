// Shared pieces of the `tracetable` subcommands: option parsing helpers,
// table opening and track selection, all reporting errors as absl::Status.
#ifndef TRACETABLE_CLI_COMMON_H_
#define TRACETABLE_CLI_COMMON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "boost/program_options.hpp"
#include "query/track_filter.h"
#include "store/table.h"

namespace tracetable::cli {

// "1G", "256M", "64MiB", "1000000" -> bytes.
absl::StatusOr<uint64_t> ParseSize(const std::string& text);

// Absolute microseconds (exact decimal) -> the table's relative ps.
absl::StatusOr<int64_t> ParseTableTime(const Table& table, const std::string& us,
                                       std::string_view option);

std::string HumanBytes(uint64_t bytes);
uint64_t DirectoryBytes(const std::string& path);

// Parses a subcommand's options plus its positional arguments (`positional`
// receives them; max_positional = -1 for any number). Returns an exit code
// when the command should stop here: 0 after printing --help, 1 after a
// parse error (printed); nullopt to go on.
std::optional<int> ParseCommandLine(std::string_view command, int argc, char** argv,
                                    const boost::program_options::options_description& opts,
                                    std::vector<std::string>* positional, int max_positional,
                                    boost::program_options::variables_map* vm);

// For long-lived query processes: keep freed large buffers in the heap, so
// answer after answer does not map and fault in fresh pages (a quarter of a
// zoomed-out query's time otherwise).
void KeepFreedMemoryForReuse();

// For a single-table ingest with a budget of at least 512 MiB (a no-op
// below): thread heaps start at their full 64 MiB and are never trimmed, so
// they stay in huge pages and are not faulted in again (gen 10M at two
// threads: 38k -> 2k page faults, 16% less CPU). Costs RSS. Call before any
// thread starts.
void KeepIngestHeapWarm(uint64_t memory_budget);

// Each subcommand: argv without the program name's subcommand word.
int IngestMain(int argc, char** argv);
int InfoMain(int argc, char** argv);
int QueryMain(int argc, char** argv);
int ExportMain(int argc, char** argv);
int SearchMain(int argc, char** argv);
int MemoryMain(int argc, char** argv);
int VerifyMain(int argc, char** argv);
int BenchQueriesMain(int argc, char** argv);
int ServeMain(int argc, char** argv);

// Prints "tracetable <cmd>: <message>" to stderr and returns 1.
int Fail(std::string_view command, absl::string_view message);

}  // namespace tracetable::cli

#endif  // TRACETABLE_CLI_COMMON_H_
