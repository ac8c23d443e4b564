#include "cli/run_ingest.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "format/levels.h"
#include "ingest/origin_probe.h"
#include "store/output_claim.h"
#include "store/table.h"
#include "store/table_builder.h"

namespace tracetable::cli {
namespace fs = std::filesystem;
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

absl::Status Prefixed(const absl::Status& s, const std::string& prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

// What the manifest records of a finished shard, from the shard itself.
absl::StatusOr<RunShardInfo> DescribeShard(const std::string& run, const std::string& host,
                                           const InputFile& input) {
  RunShardInfo info;
  info.host = host;
  info.dir = ShardDirFor(host);
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Open((fs::path(run) / info.dir).string());
  if (!t.ok()) return t.status();
  const proto::TableMeta& meta = (*t)->meta();
  info.table_id = meta.table_id();
  info.min_ts = meta.min_ts();
  info.max_end = meta.max_end();
  info.num_events = meta.num_events();
  info.event_ids = meta.event_ids();
  info.num_tracks = static_cast<uint32_t>((*t)->resources().tracks_size());
  info.num_processes = static_cast<uint32_t>((*t)->resources().processes_size());
  info.num_levels = meta.num_levels();
  info.input_name = fs::path(input.path).filename().string();
  info.input_path = input.path;
  info.input_bytes = input.bytes;
  info.clock_shift_ns = meta.inputs_size() > 0 ? meta.inputs(0).clock_shift_ns() : 0;
  return info;
}

// A folder a new run may be made in: absent, empty, or a run other writers
// are making (nothing but shards/ with shard tables or their temp folders,
// RUN.lock and RUN.tmp-*: its first manifest is not written yet).
bool FreeForNewRun(const std::string& run) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(run, ec))) return true;
  if (!fs::is_directory(run, ec)) return false;
  for (const fs::directory_entry& e : fs::directory_iterator(run, ec)) {
    const std::string name = e.path().filename().string();
    if (name == kRunLockName || name.rfind(absl::StrCat(kRunFileName, ".tmp-"), 0) == 0) continue;
    if (name != kRunShardsDir || !e.is_directory(ec)) return false;
    for (const fs::directory_entry& s : fs::directory_iterator(e.path(), ec)) {
      if (s.path().filename().string().find(".tracetable") == std::string::npos) return false;
    }
  }
  return !ec;
}

// Undoes the folders a failed --shard-of made for a run that never got a
// manifest (only if they are still empty: another writer may be using them).
void RemoveEmptyNewRun(const std::string& run) {
  if (IsRun(run)) return;
  std::error_code ec;
  fs::remove(fs::path(run) / kRunShardsDir, ec);
  fs::remove(run, ec);
}

// Rejects two inputs that would share a shard folder.
absl::StatusOr<std::vector<std::string>> HostsOf(const std::vector<InputFile>& inputs) {
  std::vector<std::string> hosts;
  absl::flat_hash_map<std::string, std::string> seen;  // escaped host -> input
  for (const InputFile& in : inputs) {
    hosts.push_back(ShardHost(in, ""));
    auto [it, inserted] = seen.try_emplace(EscapeHostName(hosts.back()), in.path);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "inputs ", it->second, " and ", in.path, " are both host ", hosts.back(),
          ": a run has one shard per host (rename one, or --single-table)"));
    }
  }
  return hosts;
}

// Renames the finished run `temp` to `out` in one step (exchanging with an
// old run when replacing), then removes the old one.
absl::Status RenameRunIntoPlace(const std::string& temp, const std::string& out, bool force) {
  std::error_code ec;
  const bool replace = fs::exists(fs::symlink_status(out, ec));
  if (replace) {
    if (!force) return absl::AlreadyExistsError(absl::StrCat(out, ": already exists (use --force to replace a run)"));
    if (absl::Status s = CheckRunReplaceable(out); !s.ok()) return s;
  }
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, out.c_str(),
                  replace ? RENAME_EXCHANGE : RENAME_NOREPLACE) != 0) {
    return absl::InternalError(absl::StrCat("cannot rename ", temp, " to ", out, ": ", std::strerror(errno)));
  }
  if (replace) fs::remove_all(temp, ec);  // now the old run
  return absl::OkStatus();
}

// A shard builder's memory outside its budget: parse buffers, pipeline
// batches, LevelDB's write buffer (a Kineto 3M shard at a 256 MiB budget
// peaked 42 MiB over it). One builder's fits in the 200 MB the budget
// allows over it; the other jobs' come out of the budget.
constexpr uint64_t kShardBuilderOverhead = uint64_t{48} << 20;

// Each of `jobs` shards built at once gets an equal share of what is left.
uint64_t ShardBudget(uint64_t budget, int jobs) {
  const uint64_t overhead = kShardBuilderOverhead * static_cast<uint64_t>(jobs - 1);
  const uint64_t left = budget > 2 * overhead ? budget - overhead : budget / 2;
  return std::max<uint64_t>(left / static_cast<uint64_t>(jobs), uint64_t{16} << 20);
}

}  // namespace

std::optional<TableGrid> RunGrid(const std::vector<RunShardInfo>& shards) {
  std::optional<TableGrid> grid;
  int64_t max_end = 0;
  for (const RunShardInfo& s : shards) {
    if (s.num_events == 0) continue;
    if (!grid) {
      grid = TableGrid{s.min_ts, 1};
      max_end = s.max_end;
    }
    grid->min_ts = std::min(grid->min_ts, s.min_ts);
    max_end = std::max(max_end, s.max_end);
  }
  if (grid) grid->num_levels = NumLevelsForSpan(max_end - grid->min_ts);
  return grid;
}

bool OnGrid(const RunShardInfo& shard, const TableGrid& grid) {
  return shard.num_events == 0 ||
         (shard.min_ts == grid.min_ts && static_cast<int>(shard.num_levels) == grid.num_levels);
}

std::string ShardHost(const InputFile& input, const std::string& given) {
  return given.empty() ? HostFromFileName(input.path) : given;
}

absl::StatusOr<ShardResult> BuildShard(const InputFile& input, const std::string& run,
                                       const std::string& host, int64_t origin_ns,
                                       const ShardOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  BuildOptions bo;
  bo.output = (fs::path(run) / ShardDirFor(host)).string();
  bo.memory_budget = options.memory_budget;
  bo.tile_threads = options.threads;
  bo.overwrite = options.force;
  bo.overwrite_unread = options.force && options.listed;
  bo.memory_profile = options.memory_profile;
  bo.stats_bucket_events = options.stats_bucket_events;
  bo.stop = options.stop;
  bo.origin_ns = origin_ns;
  bo.grid = options.grid;
  absl::StatusOr<std::unique_ptr<TableBuilder>> builder = TableBuilder::Create(bo);
  if (!builder.ok()) return builder.status();
  // The input's host as a single-table ingest of several inputs gives it:
  // a JSON input is named by the shard's host; an XSpace names its own host
  // (from its hostnames) unless another name than its file's was given.
  InputFile in = input;
  const bool xspace_names_itself =
      in.kind == InputFile::Kind::kXSpace && host == HostFromFileName(in.path);
  in.host = xspace_names_itself ? "" : host;
  if (absl::Status s = ReadInputs({in}, builder->get(), nullptr,
                                  ReadInputsOptions{.strict = options.strict, .threads = options.threads});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = (*builder)->Finish(); !s.ok()) return s;
  ShardResult r;
  for (const auto& [reason, n] : (*builder)->meta().skipped_counts()) r.skipped += n;
  r.warnings = (*builder)->meta().warnings_size();
  builder->reset();
  absl::StatusOr<RunShardInfo> info = DescribeShard(run, host, input);
  if (!info.ok()) return info.status();
  r.info = *std::move(info);
  r.seconds = SecondsSince(start);
  return r;
}

absl::StatusOr<ShardResult> IngestShardOf(const InputFile& input, const std::string& run,
                                          const std::string& given_host, std::optional<int64_t> origin_ns,
                                          const ShardOptions& options) {
  const std::string host = ShardHost(input, given_host);
  const bool new_run = !IsRun(run);
  std::optional<TableGrid> shard_options_grid;
  int64_t origin = 0;
  bool listed_shard = false;
  if (new_run) {
    if (!FreeForNewRun(run)) {
      return absl::FailedPreconditionError(absl::StrCat(
          run, ": exists and is not a run (no RUN file); --shard-of adds to a run or makes one at a new path"));
    }
    if (origin_ns) {
      origin = *origin_ns;
    } else {
      absl::StatusOr<int64_t> first = FirstTimestampNs(input);
      if (!first.ok()) return Prefixed(first.status(), "cannot start a run: ");
      origin = *first;
    }
  } else {
    absl::StatusOr<RunManifest> m = ReadRunManifest(run);
    if (!m.ok()) return m.status();
    if (m->Find(host) && !options.force) {
      return absl::AlreadyExistsError(absl::StrCat(
          run, ": host ", host, " already has a shard (use --force to replace it)"));
    }
    if (origin_ns && *origin_ns != m->origin_ns) {
      return absl::InvalidArgumentError(absl::StrCat("--origin-ns ", *origin_ns, " differs from the run's ",
                                                     m->origin_ns, ": every shard takes the run's origin"));
    }
    origin = m->origin_ns;
    const RunShardInfo* listed = m->Find(host);
    listed_shard = listed && listed->dir == ShardDirFor(host);
    std::vector<RunShardInfo> others;
    for (const RunShardInfo& s : m->shards) {
      if (s.host != host) others.push_back(s);
    }
    shard_options_grid = options.grid ? options.grid : RunGrid(others);
  }
  std::error_code ec;
  fs::create_directories(fs::path(run) / kRunShardsDir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", run, ": ", ec.message()));
  const std::string shard_path = (fs::path(run) / ShardDirFor(host)).string();
  const bool shard_existed = fs::exists(fs::symlink_status(shard_path, ec));
  ShardOptions shard_options = options;
  shard_options.grid = shard_options_grid;
  shard_options.listed = listed_shard;
  // Two writers creating one run at once: the first to enter the manifest
  // sets its origin and the other rebuilds with it (at most once: the origin
  // of an existing run never changes).
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<ShardResult> built = BuildShard(input, run, host, origin, shard_options);
    if (!built.ok()) {
      if (new_run) RemoveEmptyNewRun(run);
      return built.status();
    }
    std::optional<int64_t> run_origin;
    absl::Status s = UpdateRunManifest(run, [&](RunManifest& m) {
      if (m.generation == 0) {
        m.origin_ns = origin;
      } else if (m.origin_ns != origin) {
        run_origin = m.origin_ns;
        return absl::AbortedError("the run was made with another origin meanwhile");
      }
      const RunShardInfo* old = m.Find(host);
      if (old && !options.force) {
        return absl::AlreadyExistsError(absl::StrCat(
            run, ": host ", host, " got a shard meanwhile (use --force to replace it)"));
      }
      std::vector<RunShardInfo> others;
      for (const RunShardInfo& o : m.shards) {
        if (o.host != host) others.push_back(o);
      }
      const std::optional<TableGrid> grid = RunGrid(others);
      built->extends_grid = grid && !OnGrid(built->info, *grid);
      m.Put(built->info);
      return absl::OkStatus();
    });
    if (s.ok()) return built;
    if (run_origin && !origin_ns) {
      origin = *run_origin;
      shard_options.force = true;  // the shard just built is ours to replace
      continue;
    }
    if (!shard_existed) fs::remove_all(shard_path, ec);  // ours, and never listed
    return s;
  }
  return absl::InternalError("the run's origin changed twice");
}

absl::StatusOr<RunManifest> IngestRun(const std::vector<InputFile>& inputs, const std::string& out,
                                      int jobs, std::optional<int64_t> origin_ns,
                                      const ShardOptions& options,
                                      const std::function<void(const ShardResult&)>& on_shard) {
  if (inputs.empty()) return absl::InvalidArgumentError("a run needs at least one input");
  absl::StatusOr<std::vector<std::string>> hosts = HostsOf(inputs);
  if (!hosts.ok()) return hosts.status();
  std::error_code ec;
  if (fs::exists(fs::symlink_status(out, ec))) {
    if (!options.force) return absl::AlreadyExistsError(absl::StrCat(out, ": already exists (use --force to replace a run)"));
    if (absl::Status s = CheckRunReplaceable(out); !s.ok()) return s;
  }
  absl::StatusOr<std::unique_ptr<OutputClaim>> claim = OutputClaim::Acquire(out, nullptr);
  if (!claim.ok()) return claim.status();
  const std::string temp = absl::StrCat(out, ".tmp-", ::getpid());
  // Removes the half-built run on every early return.
  struct TempRun {
    std::string path;
    ~TempRun() {
      std::error_code ec;
      if (!path.empty()) fs::remove_all(path, ec);
    }
  } temp_run{temp};
  fs::create_directories(fs::path(temp) / kRunShardsDir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", temp, ": ", ec.message()));

  int64_t origin = 0;
  if (origin_ns) {
    origin = *origin_ns;
  } else {
    absl::StatusOr<int64_t> first = FirstTimestampNs(inputs[0]);
    if (!first.ok()) return Prefixed(first.status(), "cannot start a run: ");
    origin = *first;
  }
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(inputs.size())));
  ShardOptions each = options;
  each.memory_budget = ShardBudget(options.memory_budget, jobs);
  each.threads = std::max(1, options.threads / jobs);
  each.force = false;  // a fresh folder: nothing to replace

  // Shards not started after a failure stay empty.
  std::vector<std::optional<absl::StatusOr<ShardResult>>> results(inputs.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex report_mu;
  // Each shard takes the grid of those done before it when it fits (hosts
  // of one capture mostly do), so few need the second build below.
  std::vector<RunShardInfo> done;
  auto work = [&] {
    for (size_t i; !failed.load() && (i = next.fetch_add(1)) < inputs.size();) {
      ShardOptions mine = each;
      {
        std::lock_guard<std::mutex> lock(report_mu);
        mine.grid = RunGrid(done);
      }
      results[i] = BuildShard(inputs[i], temp, (*hosts)[i], origin, mine);
      if (!results[i]->ok()) {
        failed.store(true);
        continue;
      }
      std::lock_guard<std::mutex> lock(report_mu);
      done.push_back((*results[i])->info);
      if (on_shard) on_shard(**results[i]);
    }
  };
  std::vector<std::thread> workers;
  for (int j = 1; j < jobs; ++j) workers.emplace_back(work);
  work();
  for (std::thread& t : workers) t.join();
  auto first_error = [&]() -> absl::Status {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (results[i] && !results[i]->ok()) {
        return Prefixed(results[i]->status(), absl::StrCat("host ", (*hosts)[i], " (", inputs[i].path, "): "));
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status s = first_error(); !s.ok()) return s;
  // Once more, on the grid of all shards, those not on it (the grid is known
  // only once every host is read: a host that starts earlier or ends later
  // than those before it moves it).
  std::vector<RunShardInfo> built;
  for (const auto& r : results) built.push_back((*r)->info);
  const std::optional<TableGrid> grid = RunGrid(built);
  std::vector<size_t> off_grid;
  for (size_t i = 0; grid && i < built.size(); ++i) {
    if (!OnGrid(built[i], *grid)) off_grid.push_back(i);
  }
  each.grid = grid;
  each.force = true;  // replaces this ingest's own first build
  next = 0;
  auto regrid = [&] {
    for (size_t k; !failed.load() && (k = next.fetch_add(1)) < off_grid.size();) {
      const size_t i = off_grid[k];
      results[i] = BuildShard(inputs[i], temp, (*hosts)[i], origin, each);
      if (!results[i]->ok()) failed.store(true);
    }
  };
  workers.clear();
  for (int j = 1; j < jobs; ++j) workers.emplace_back(regrid);
  regrid();
  for (std::thread& t : workers) t.join();
  if (absl::Status s = first_error(); !s.ok()) return s;
  if (!off_grid.empty()) {
    std::fprintf(stderr, "rebuilt %zu of %zu shards on the run's summary grid (their own spans differ)\n",
                 off_grid.size(), inputs.size());
  }
  if (absl::Status s = UpdateRunManifest(temp, [&](RunManifest& m) {
        m.origin_ns = origin;
        for (const auto& r : results) m.Put((*r)->info);
        return absl::OkStatus();
      });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = RenameRunIntoPlace(temp, out, options.force); !s.ok()) return s;
  temp_run.path.clear();
  return ReadRunManifest(out);
}

namespace {

// The --stats-bucket-events that gives about the range-aggregate grid the
// shard of `s` has now (0: it has none, or does not open): a rebuild on
// the run's grid keeps its aggregates without being told their size.
uint64_t KeptBucketEvents(const std::string& run, const RunShardInfo& s) {
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Open((fs::path(run) / s.dir).string());
  if (!t.ok() || !(*t)->meta().has_stats_index()) return 0;
  const proto::TableMeta& m = (*t)->meta();
  const double span = static_cast<double>(std::max<int64_t>(m.max_end() - m.min_ts(), 1));
  const double bucket = std::ldexp(1.0, static_cast<int>(m.stats_index().bucket_log2()));
  return std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(m.num_events()) * bucket / span));
}

}  // namespace

absl::StatusOr<int> RegridRun(const std::string& run, int jobs, const ShardOptions& options,
                              const std::function<void(const ShardResult&)>& on_shard) {
  absl::StatusOr<RunManifest> m = ReadRunManifest(run);
  if (!m.ok()) return m.status();
  const std::optional<TableGrid> grid = RunGrid(m->shards);
  std::vector<RunShardInfo> todo;
  for (const RunShardInfo& s : m->shards) {
    if (grid && !OnGrid(s, *grid)) todo.push_back(s);
  }
  // Nothing to rebuild: still rewrite the manifest, which writes the run's
  // view (RUN.view) again, e.g. for a run made before views existed.
  if (todo.empty()) {
    absl::Status s = UpdateRunManifest(run, [](RunManifest&) { return absl::OkStatus(); });
    return s.ok() ? absl::StatusOr<int>(0) : s;
  }
  ShardOptions each = options;
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(todo.size())));
  each.memory_budget = ShardBudget(options.memory_budget, jobs);
  each.threads = std::max(1, options.threads / jobs);
  each.grid = grid;
  each.force = true;
  std::atomic<size_t> next{0};
  std::mutex mu;
  absl::Status first_error;
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1)) < todo.size();) {
      const RunShardInfo& s = todo[k];
      ShardOptions mine = each;
      if (mine.stats_bucket_events == 0) mine.stats_bucket_events = KeptBucketEvents(run, s);
      absl::StatusOr<std::vector<InputFile>> in = ExpandInputs({s.input_path});
      absl::StatusOr<ShardResult> r =
          !in.ok() ? absl::StatusOr<ShardResult>(in.status())
          : in->size() != 1 ? absl::StatusOr<ShardResult>(absl::FailedPreconditionError("input is not one file"))
                            : IngestShardOf((*in)[0], run, s.host, std::nullopt, mine);
      std::lock_guard<std::mutex> lock(mu);
      if (!r.ok()) {
        if (first_error.ok()) first_error = Prefixed(r.status(), absl::StrCat("host ", s.host, " (", s.input_path, "): "));
      } else if (on_shard) {
        on_shard(*r);
      }
    }
  };
  std::vector<std::thread> workers;
  for (int j = 1; j < jobs; ++j) workers.emplace_back(work);
  work();
  for (std::thread& t : workers) t.join();
  if (!first_error.ok()) return first_error;
  return static_cast<int>(todo.size());
}

}  // namespace tracetable::cli
