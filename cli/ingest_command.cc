// tracetable ingest INPUT... -o OUT.tracetable [--memory-budget SIZE] [--strict] [--threads N]
// (or a run of shards: INPUT --shard-of RUN, FOLDER -o RUN --jobs N; cli/run_ingest.h)
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <optional>
#include <cstdio>
#include <iostream>
#include <thread>
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "boost/program_options.hpp"
#include "cli/common.h"
#include "cli/run_ingest.h"
#include "ingest/input.h"
#include "store/table_builder.h"

namespace tracetable::cli {
namespace po = boost::program_options;
namespace {

using Clock = std::chrono::steady_clock;

// One line, redrawn in place on a terminal; silent otherwise.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled), start_(Clock::now()) {}

  void Reading(uint64_t done, uint64_t total, uint64_t events) {
    if (!Due()) return;
    const double secs = Seconds();
    const double frac = total ? double(done) / total : 0;
    const double eta = frac > 0.01 ? secs / frac - secs : 0;
    std::fprintf(stderr, "\r  reading %5.1f%%  %s / %s  %.2fM events  %.2fM ev/s  ETA %.0fs   ",
                 frac * 100, HumanBytes(done).c_str(), HumanBytes(total).c_str(), events / 1e6,
                 events / 1e6 / std::max(secs, 1e-3), eta);
  }
  void Stage(std::string_view stage, double frac) {
    if (stages_.empty() || stages_.back().first != stage) {
      stages_.emplace_back(std::string(stage), Seconds());
    }
    if (!Due()) return;
    std::fprintf(stderr, "\r  %s %5.1f%%                                                   ",
                 std::string(stage).c_str(), frac * 100);
  }
  void Done() {
    if (enabled_) std::fprintf(stderr, "\r%100s\r", "");
  }
  double Seconds() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }
  // "reading 0.63s, writing tiles 0.35s, ...": where the time went.
  std::string StageTimes(double read_secs) const {
    std::string out = absl::StrCat("reading ", absl::StrFormat("%.2fs", read_secs));
    for (size_t i = 0; i < stages_.size(); ++i) {
      const double end = i + 1 < stages_.size() ? stages_[i + 1].second : Seconds();
      absl::StrAppend(&out, ", ", stages_[i].first, " ", absl::StrFormat("%.2fs", end - stages_[i].second));
    }
    return out;
  }

 private:
  bool Due() {
    if (!enabled_) return false;
    auto now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return false;
    last_ = now;
    return true;
  }
  bool enabled_;
  Clock::time_point start_, last_;
  std::vector<std::pair<std::string, double>> stages_;  // name, start second
};

// Ctrl-C asks the builder to stop; the ingest then unwinds normally and
// removes its temporary table. A second Ctrl-C kills at once.
std::atomic<bool> g_stop{false};

void OnSignal(int sig) {
  g_stop.store(true);
  std::signal(sig, SIG_DFL);
}

// Warnings shown at the end of an ingest; the rest are in `tracetable info`.
constexpr int kWarningsShown = 5;

// What was skipped or tolerated, so a damaged input never ingests without a
// word: counts by reason, then the first warnings (file and byte offset).
void ReportProblems(const proto::TableMeta& meta) {
  if (!meta.skipped_counts().empty()) {
    std::vector<std::pair<std::string, uint64_t>> counts(meta.skipped_counts().begin(),
                                                         meta.skipped_counts().end());
    std::sort(counts.begin(), counts.end());
    uint64_t total = 0;
    for (const auto& [reason, n] : counts) total += n;
    std::fprintf(stderr, "warning: skipped or tolerated %llu item(s):\n",
                 static_cast<unsigned long long>(total));
    for (const auto& [reason, n] : counts) {
      std::fprintf(stderr, "  %llu  %s\n", static_cast<unsigned long long>(n), reason.c_str());
    }
  }
  const int n = meta.warnings_size();
  for (int i = 0; i < n && i < kWarningsShown; ++i) {
    std::fprintf(stderr, "warning: %s\n", meta.warnings(i).c_str());
  }
  if (n > kWarningsShown) {
    std::fprintf(stderr, "warning: ... and %d more (see `tracetable info`)\n", n - kWarningsShown);
  }
}

void ReportShard(const ShardResult& r) {
  std::fprintf(stderr, "shard %s: %llu events in %.2fs -> %s", r.info.host.c_str(),
               static_cast<unsigned long long>(r.info.num_events), r.seconds, r.info.dir.c_str());
  if (r.skipped || r.warnings) {
    std::fprintf(stderr, " (%llu skipped, %d warnings: tracetable info on the shard)",
                 static_cast<unsigned long long>(r.skipped), r.warnings);
  }
  std::fprintf(stderr, "\n");
}

struct RunFlags {
  std::string shard_of, host, regrid;
  int jobs = 1;
  std::optional<int64_t> origin_ns;
};

// Whether these inputs become a run: --run, or one folder argument holding
// several hosts (several trace files) unless --single-table.
bool MakesRun(const std::vector<std::string>& args, const std::vector<InputFile>& files,
              const po::variables_map& vm) {
  if (vm.count("run")) return true;
  if (vm.count("single-table")) return false;
  std::error_code ec;
  return args.size() == 1 && std::filesystem::is_directory(args[0], ec) && files.size() > 1;
}

int IngestRunOrShard(const std::vector<std::string>& args, const std::vector<InputFile>& files,
                     const std::string& output, const RunFlags& flags, const ShardOptions& options) {
  const auto start = Clock::now();
  if (!flags.regrid.empty()) {
    absl::StatusOr<int> n = RegridRun(flags.regrid, flags.jobs, options, ReportShard);
    if (!n.ok()) return Fail("ingest", n.status().message());
    std::fprintf(stderr, "%d shard(s) of %s rebuilt on the run's summary grid\n", *n, flags.regrid.c_str());
    return 0;
  }
  if (!flags.shard_of.empty()) {
    if (files.size() != 1) {
      return Fail("ingest", absl::StrCat("--shard-of takes one input file (one host); ", args.size() == 1 ? "the folder holds " : "got ",
                                         files.size(), " (build a run from a folder with -o RUN)"));
    }
    absl::StatusOr<ShardResult> r = IngestShardOf(files[0], flags.shard_of, flags.host, flags.origin_ns, options);
    if (!r.ok()) return Fail("ingest", r.status().message());
    ReportShard(*r);
    std::fprintf(stderr, "added host %s to run %s\n", r->info.host.c_str(), flags.shard_of.c_str());
    if (r->extends_grid) {
      std::fprintf(stderr,
                   "warning: host %s extends the run's span, so the other shards are not on the run's summary "
                   "grid: coarse windows over the run need them rebuilt (tracetable ingest --regrid RUN, once every "
                   "host is in; docs/scale-out.md)\n", r->info.host.c_str());
    }
    return 0;
  }
  if (!flags.host.empty()) return Fail("ingest", "--host names the input of --shard-of");
  absl::StatusOr<RunManifest> m = IngestRun(files, output, flags.jobs, flags.origin_ns, options, ReportShard);
  if (!m.ok()) return Fail("ingest", absl::StrCat(m.status().message(), "\nnothing was written to ", output));
  uint64_t events = 0;
  for (const RunShardInfo& s : m->shards) events += s.num_events;
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::fprintf(stderr, "ingested a run of %zu hosts, %llu events in %.2fs (%d jobs); %s on disk -> %s\n",
               m->shards.size(), static_cast<unsigned long long>(events), secs,
               std::max(1, std::min<int>(flags.jobs, static_cast<int>(files.size()))),
               HumanBytes(DirectoryBytes(output)).c_str(), output.c_str());
  return 0;
}

}  // namespace

int IngestMain(int argc, char** argv) {
  po::options_description opts(
      "usage: tracetable ingest INPUT... -o OUT.tracetable [options]\n\n"
      "Converts traces into one table. INPUT is a Chrome trace (.json, .json.gz, object or\n"
      "array form) or an XSpace profile (.xplane.pb), or a folder of them (e.g.\n"
      "<logdir>/plugins/profile/<run>/). Several inputs become hosts of one table; a\n"
      "folder of several hosts becomes a run (one shard table per host, docs/scale-out.md).\n"
      "       tracetable ingest HOST_INPUT --shard-of RUN [--host NAME]\n"
      "adds (or with --force replaces) one host's shard of RUN, creating RUN if absent;\n"
      "writers of different hosts may run at once, on any machines sharing RUN.\n\noptions");
  std::vector<std::string> inputs;
  std::string output, budget = "1G";
  int threads = 0;
  uint64_t stats_bucket_events = 0;
  RunFlags run_flags;
  int64_t origin_ns = 0;
  opts.add_options()
      ("help,h", "show this help")
      ("output,o", po::value(&output), "the .tracetable directory to create")
      ("memory-budget", po::value(&budget)->default_value("1G"),
       "memory for buffering events before spilling sorted runs to disk (e.g. 256M, 2G)")
      ("force", "replace OUT if it is a tracetable or a run, or with --shard-of the host's shard, "
                "even one missing or too damaged to open (anything else is refused)")
      ("strict", "fail on the first bad event or truncated input instead of skipping it "
                 "(by default bad events are skipped, counted and reported at the end)")
      ("threads", po::value(&threads)->default_value(0),
       "threads reading several inputs at once, parsing a JSON input and building tiles (0: one per core, at most 4 building tiles); the table is the same at any count")
      ("quiet,q", "no progress line")
      ("timings", "print how long each stage took")
      ("no-memory-profile", "do not derive the memory profile (to measure what it costs)")
      ("stats-bucket-events", po::value(&stats_bucket_events)->default_value(0),
       "write range statistics aggregates, about N events per level-0 bucket (0: none): exact stats and "
       "search totals of any range; fewer is faster, more is a smaller table")
      ("shard-of", po::value(&run_flags.shard_of), "add the one input as a host's shard of this run")
      ("host", po::value(&run_flags.host), "with --shard-of: the host's name (default: the file name "
                                           "without extensions)")
      ("regrid", po::value(&run_flags.regrid), "rebuild from their inputs the shards of this run that are not "
                                              "on its summary grid (after hosts were added with --shard-of)")
      ("run", "make a run (one shard per input) even from files or a one-host folder")
      ("single-table", "make one table even from a folder of several hosts")
      ("jobs", po::value(&run_flags.jobs)->default_value(1),
       "shards built at once when making a run (the memory budget, less 48 MiB per shard past the "
       "first, and --threads are split among them)")
      ("origin-ns", po::value(&origin_ns), "relative time 0, absolute ns (default: the first timestamp; "
                                            "a shard takes its run's)");
  po::variables_map vm;
  if (auto exit = ParseCommandLine("ingest", argc, argv, opts, &inputs, -1, &vm)) return *exit;
  if (inputs.empty() && !vm.count("regrid")) return Fail("ingest", "no input given (see --help)");
  if (output.empty() && !vm.count("shard-of") && !vm.count("regrid")) return Fail("ingest", "no output given: -o OUT.tracetable (or --shard-of RUN)");
  absl::StatusOr<uint64_t> budget_bytes = ParseSize(budget);
  if (!budget_bytes.ok()) return Fail("ingest", budget_bytes.status().message());
  if (*budget_bytes < (16ull << 20)) return Fail("ingest", "--memory-budget must be at least 16M");
  if (threads < 0) return Fail("ingest", "--threads must be 0 (one per core) or more");
  const int tile_threads = threads;  // 0: the builder's default
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (vm.count("run") && vm.count("single-table")) return Fail("ingest", "--run and --single-table exclude each other");
  if (run_flags.jobs < 1) return Fail("ingest", "--jobs must be 1 or more");
  if (vm.count("origin-ns")) run_flags.origin_ns = origin_ns;
  if (vm.count("regrid") && (!inputs.empty() || !output.empty() || !run_flags.shard_of.empty())) {
    return Fail("ingest", "--regrid RUN takes no input, -o or --shard-of");
  }
  absl::StatusOr<std::vector<InputFile>> files =
      vm.count("regrid") ? absl::StatusOr<std::vector<InputFile>>(std::vector<InputFile>{}) : ExpandInputs(inputs);
  if (!files.ok()) return Fail("ingest", files.status().message());
  if (!run_flags.shard_of.empty() || !run_flags.regrid.empty() || MakesRun(inputs, *files, vm)) {
    if (!run_flags.shard_of.empty() && !output.empty()) return Fail("ingest", "--shard-of and -o exclude each other");
    if (vm.count("single-table") && !run_flags.shard_of.empty()) return Fail("ingest", "--shard-of makes a shard, not a table");
    ShardOptions so;
    so.memory_budget = *budget_bytes;
    so.threads = threads;
    so.strict = vm.count("strict") > 0;
    so.memory_profile = vm.count("no-memory-profile") == 0;
    so.force = vm.count("force") > 0;
    so.stats_bucket_events = stats_bucket_events;
    so.stop = &g_stop;
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    return IngestRunOrShard(inputs, *files, output, run_flags, so);
  }
  if (!run_flags.host.empty()) return Fail("ingest", "--host names the input of --shard-of");
  KeepIngestHeapWarm(*budget_bytes);

  ProgressLine progress(!vm.count("quiet") && isatty(STDERR_FILENO));
  BuildOptions bo;
  bo.output = output;
  bo.memory_budget = *budget_bytes;
  bo.tile_threads = tile_threads;
  bo.overwrite = vm.count("force") > 0;
  bo.memory_profile = vm.count("no-memory-profile") == 0;
  bo.stats_bucket_events = stats_bucket_events;
  bo.origin_ns = run_flags.origin_ns;
  bo.stop = &g_stop;
  bo.progress = [&](std::string_view stage, double f) { progress.Stage(stage, f); };
  std::vector<std::string> leftovers;
  bo.removed_leftovers = &leftovers;
  absl::StatusOr<std::unique_ptr<TableBuilder>> created = TableBuilder::Create(bo);
  for (const std::string& l : leftovers) {
    std::fprintf(stderr, "removed %s, left by an ingest that was killed\n", l.c_str());
  }
  if (!created.ok()) return Fail("ingest", created.status().message());
  std::unique_ptr<TableBuilder> builder = std::move(*created);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  uint64_t total_bytes = 0;
  for (const InputFile& f : *files) total_bytes += f.bytes;
  if (absl::Status s = ReadInputs(*files, builder.get(), [&](uint64_t done, uint64_t total) {
        progress.Reading(done, total, builder->events_added());
      }, ReadInputsOptions{.strict = vm.count("strict") > 0, .threads = threads});
      !s.ok()) {
    progress.Done();
    builder.reset();
    return Fail("ingest", absl::StrCat(s.message(), "\nnothing was written to ", output));
  }
  const double read_secs = progress.Seconds();
  absl::Status s = builder->Finish();
  progress.Done();
  if (!s.ok()) {
    builder.reset();
    return Fail("ingest", absl::StrCat(s.message(), "\nnothing was written to ", output));
  }
  const double secs = progress.Seconds();
  const BuildStats& st = builder->stats();
  const uint64_t disk = DirectoryBytes(output);
  std::fprintf(stderr,
               "ingested %zu input(s), %s, %llu events in %.2fs (read %.2fs, %.1f MB/s, %.2fM ev/s); "
               "%s on disk (%.1f B/event), %llu tiles, %llu spill runs, %s merged when sealing -> %s\n",
               files->size(), HumanBytes(total_bytes).c_str(),
               static_cast<unsigned long long>(st.events), secs, read_secs,
               total_bytes / 1e6 / std::max(secs, 1e-9), st.events / 1e6 / std::max(secs, 1e-9),
               HumanBytes(disk).c_str(), st.events ? double(disk) / st.events : 0.0,
               static_cast<unsigned long long>(st.tiles),
               static_cast<unsigned long long>(st.spill_runs), HumanBytes(st.sealed_copy_bytes).c_str(),
               output.c_str());
  if (!st.memory_report.empty()) std::fprintf(stderr, "%s", st.memory_report.c_str());
  if (vm.count("timings")) std::fprintf(stderr, "stages: %s\n", progress.StageTimes(read_secs).c_str());
  ReportProblems(builder->meta());
  builder.reset();
  return 0;
}

}  // namespace tracetable::cli
