#include "store/table_builder.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <system_error>
#include <thread>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/args_codec.h"
#include "format/flow_id.h"
#include "format/thread_time_codec.h"
#include "format/time.h"
#include "format/keys.h"
#include "format/levels.h"
#include "format/stats_codec.h"
#include "store/file_list.h"
#include "store/replace_check.h"
#include "store/sorted_runs.h"
#include "store/meta_check.h"
#include "store/table_format.h"
#include "store/thread_name.h"
#include "store/track_pool.h"
#include "format/tile_codec.h"

namespace tracetable {
namespace fs = std::filesystem;

namespace {

// How far ahead of the main sorter's records its pages are faulted in:
// ~0.15 s of filling at 2M events/s, and all the RSS it may add. 64 MiB
// was as fast and held 46 MiB more at the peak of a Kineto 3M ingest,
// whose memory profile keeps the warmer going past the last record (abx,
// 18 rounds: w16/w64 wall 1.00; gen 10M 0.99).
constexpr size_t kWarmAheadBytes = size_t{16} << 20;

std::string IdKey(IdToken id) {
  return absl::StrCat(id.is_number ? "n" : "s", Av(id.text));
}

const char* KindName(EventKind kind) {
  switch (kind) {
    case EventKind::kSlice: return "X";
    case EventKind::kInstant: return "i";
    case EventKind::kCounter: return "C";
    case EventKind::kFlowStart: return "s";
    case EventKind::kFlowStep: return "t";
    case EventKind::kFlowEnd: return "f";
    case EventKind::kBegin: return "B";
    case EventKind::kEnd: return "E";
    case EventKind::kAsyncBegin: return "b";
    case EventKind::kAsyncEnd: return "e";
    case EventKind::kAsyncInstant: return "n";
  }
  return "?";
}

bool IsMatchKind(EventKind kind) { return kind >= EventKind::kBegin; }

// 128 random bits as 32 hex digits (TableMeta.table_id).
std::string NewTableId() {
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 4; ++i) absl::StrAppend(&id, absl::Hex(rd(), absl::kZeroPad8));
  return id;
}

}  // namespace

TableBuilder::TableBuilder(BuildOptions options) : options_(std::move(options)) {
  if (options_.origin_ns) {
    have_origin_ = true;
    origin_ns_ = *options_.origin_ns;
  }
}

TableBuilder::~TableBuilder() {
  args_.reset();
  main_.reset();
  match_.reset();
  thread_times_.reset();
  search_index_.reset();
  flow_index_.reset();
  memory_.reset();
  out_.reset();
  runs_.reset();
  if (!finished_ && !temp_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(temp_dir_, ec);
  }
  claim_.reset();
}

absl::StatusOr<std::unique_ptr<TableBuilder>> TableBuilder::Create(BuildOptions options) {
  std::unique_ptr<TableBuilder> b(new TableBuilder(std::move(options)));
  if (absl::Status s = b->Open(); !s.ok()) return s;
  return b;
}

absl::Status TableBuilder::Open() {
  const std::string& out = options_.output;
  if (out.empty()) return absl::InvalidArgumentError("no output path given");
  std::error_code ec;
  fs::path parent = fs::absolute(out, ec).parent_path();
  if (!fs::is_directory(parent, ec)) {
    return absl::NotFoundError(absl::StrCat(out, ": folder ", parent.string(), " does not exist"));
  }
  absl::StatusOr<std::unique_ptr<OutputClaim>> claim = OutputClaim::Acquire(out, options_.removed_leftovers);
  if (!claim.ok()) return claim.status();
  claim_ = std::move(*claim);
  if (absl::Status s = CheckOutputFree(); !s.ok()) return s;
  temp_dir_ = absl::StrCat(out, ".tmp-", getpid());
  fs::remove_all(temp_dir_, ec);
  if (!fs::create_directory(temp_dir_, ec) || ec) {
    return absl::InternalError(absl::StrCat("cannot create ", temp_dir_, ": ", ec.message()));
  }
  runs_ = std::make_unique<SortedRuns>(temp_dir_);
  runs_->set_small_bytes(options_.memory_budget / 64);
  out_ = runs_->NewWriter();
  args_ = std::make_unique<ArgsWriter>(runs_->NewWriter());
  // The budget: 3/4 for the main sorter, 1/8 for begin/end records (freed
  // once matched, then 1/16 for the track workers' placed events (twice
  // that for a track past it: the external sorter's buffer beside the
  // per-level buffers, which keep their capacity), 1/32 for their held
  // summaries and 1/64 for short tracks' tiles: WriteTiles), and the rest
  // for what is not counted in records:
  // merge read buffers, pipeline batches, strings (100M events: peak RSS
  // within budget + 200 MB, bench/results).
  // The string tables are charged to the budget as they grow
  // (ChargeStrings): the two record sorters' shares are of what they leave.
  const size_t records = options_.memory_budget / sizeof(SortRecord);
  main_ = std::make_unique<MainSorter>(temp_dir_ + "-spill/main", TrackTimeOrder{},
                                           MainRecordsLimit(records));
  // Its pages are the ingest's largest fresh memory, first touched by the
  // building thread: an idle core faults them in ahead (store/page_warmer.h),
  // holding at most kWarmAheadBytes more than is used. A budget under 512
  // MiB asks for memory over speed (as KeepIngestHeapWarm, cli/common.cc).
  if (options_.memory_budget >= (size_t{512} << 20)) main_->WarmAhead(kWarmAheadBytes);
  main_->PartitionByGroupFirst();
  match_ = std::make_unique<ExternalSorter<SortRecord, LessFn<MatchLess>>>(temp_dir_ + "-spill/match", LessFn<MatchLess>{},
                                            records / 8);
  // Few traces have thread time; those that do have it on most events.
  thread_times_ = std::make_unique<ExternalSorter<ThreadTimeRecord, LessFn<IdLess>>>(
      temp_dir_ + "-spill/thread-time", LessFn<IdLess>{}, options_.memory_budget / 32 / sizeof(ThreadTimeRecord));
  // Postings (8 bytes each) spill beyond this share.
  search_index_ = std::make_unique<SearchIndexWriter>(temp_dir_ + "-spill/search",
                                                      options_.memory_budget / 32);
  // Flow postings (8 bytes each) are at most a few per flow.
  flow_index_ = std::make_unique<FlowIndexWriter>(temp_dir_ + "-spill/flows", options_.memory_budget / 64);
  // Memory events are few next to the rest (records of ~100 bytes), but
  // past their 1/32 they may take up to 1/4 from the main sorter's share
  // while it has room (LendToMemoryProfile).
  if (options_.memory_profile) {
    memory_ = std::make_unique<MemoryProfileBuilder>(
        temp_dir_ + "-spill/memory", options_.memory_budget / 32 / sizeof(MemoryRecord),
        (options_.memory_budget / 32 + options_.memory_budget / 4) / sizeof(MemoryRecord),
        [this] { return LendToMemoryProfile(); });
  }
  strings_.push_back(0);
  table_string_of_shared_.push_back(0);  // "" is 0 in both
  return absl::OkStatus();
}

void TableBuilder::BeginInput(std::string_view path, std::string_view host) {
  current_input_ = meta_.inputs_size();
  input_events_.push_back(0);
  proto::InputInfo* in = meta_.add_inputs();
  in->set_path(std::string(path));
  in->set_host(std::string(host));
}

void TableBuilder::SetInputClockShift(int64_t shift_ns) {
  if (current_input_ >= 0) meta_.mutable_inputs(current_input_)->set_clock_shift_ns(shift_ns);
}

void TableBuilder::SetInputBytesOf(int index, uint64_t bytes) {
  if (index >= 0 && index < meta_.inputs_size()) meta_.mutable_inputs(index)->set_bytes(bytes);
}

uint32_t TableBuilder::Intern(std::string_view s) { return InternShared(shared_strings_.Intern(s)); }

uint32_t TableBuilder::InternShared(uint32_t shared_id) {
  if (shared_id >= table_string_of_shared_.size()) table_string_of_shared_.resize(shared_id + 1, kNoString);
  uint32_t& id = table_string_of_shared_[shared_id];
  if (id != kNoString) return id;
  id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(shared_id);
  if (memory_) memory_->NoteString(id, shared_strings_.Text(shared_id));
  return id;
}

absl::StatusOr<int64_t> TableBuilder::ToRelativePs(int64_t abs_ns, int32_t sub_ns_ps) {
  if (!have_origin_) {
    have_origin_ = true;
    origin_ns_ = abs_ns;
  }
  return RelativePs(abs_ns, sub_ns_ps, origin_ns_);
}

uint32_t TableBuilder::Process(IdToken pid) {
  std::string key = absl::StrCat(current_input_, "\t", IdKey(pid));
  auto [it, inserted] = process_ids_.try_emplace(key, resources_.processes_size());
  if (inserted) {
    proto::Process* p = resources_.add_processes();
    p->set_id(it->second);
    p->set_input(std::max(current_input_, 0));
    p->set_pid(std::string(pid.text));
    p->set_pid_is_number(pid.is_number);
    if (current_input_ >= 0) p->set_host(meta_.inputs(current_input_).host());
  }
  return it->second;
}

uint32_t TableBuilder::NewTrack(uint32_t process, proto::Track::Kind kind) {
  proto::Track* t = resources_.add_tracks();
  t->set_id(resources_.tracks_size() - 1);
  t->set_kind(kind);
  t->set_process(process);
  return t->id();
}

uint32_t TableBuilder::ThreadTrack(IdToken pid, IdToken tid) {
  const uint32_t process = Process(pid);
  std::string key = absl::StrCat(process, "\tT", IdKey(tid));
  auto [it, inserted] = track_ids_.try_emplace(key, 0);
  if (inserted) {
    it->second = NewTrack(process, proto::Track::THREAD);
    proto::Track* t = resources_.mutable_tracks(it->second);
    t->set_tid(std::string(tid.text));
    t->set_tid_is_number(tid.is_number);
  }
  return it->second;
}

uint32_t TableBuilder::CounterTrack(IdToken pid, std::string_view counter,
                                    std::string_view series) {
  const uint32_t process = Process(pid);
  std::string key = absl::StrCat(process, "\tC", Av(counter), "\t", Av(series));
  auto [it, inserted] = track_ids_.try_emplace(key, 0);
  if (inserted) {
    it->second = NewTrack(process, proto::Track::COUNTER);
    proto::Track* t = resources_.mutable_tracks(it->second);
    t->set_name(std::string(counter));
    t->set_series(std::string(series));
  }
  return it->second;
}

uint32_t TableBuilder::AsyncTrack(IdToken pid, std::string_view name) {
  const uint32_t process = Process(pid);
  auto [it, inserted] = async_group_ids_.try_emplace(absl::StrCat(process, "\t", Av(name)), async_groups_.size());
  if (inserted) async_groups_.push_back(AsyncGroup{process, std::string(name)});
  return it->second;
}

uint32_t TableBuilder::InputAsyncKey(uint32_t key) {
  auto [it, inserted] = input_async_keys_.try_emplace((uint64_t{static_cast<uint32_t>(current_input_)} << 32) | key, 0);
  if (inserted) {
    it->second = key < strings_.size()
                     ? Intern(absl::StrCat(Av(shared_strings_.Text(strings_[key])), "|input ", current_input_))
                     : key;
  }
  return it->second;
}

uint32_t TableBuilder::AsyncGroupTrack(uint32_t group) {
  AsyncGroup& g = async_groups_[group];
  if (g.track == UINT32_MAX) {
    g.track = NewTrack(g.process, proto::Track::ASYNC);
    resources_.mutable_tracks(g.track)->set_name(g.name);
  }
  return g.track;
}

uint32_t TableBuilder::InstantTrack(IdToken pid, bool global) {
  uint32_t process = 0;
  if (global) {
    // The input's global process: no pid of the input can name it.
    auto [it, inserted] = process_ids_.try_emplace(absl::StrCat(current_input_, "\tglobal"), resources_.processes_size());
    if (inserted) {
      proto::Process* p = resources_.add_processes();
      p->set_id(it->second);
      p->set_input(std::max(current_input_, 0));
      p->set_pid_is_number(false);
      p->set_global(true);
      p->set_name("Global");
      // Above every process of the input, as Perfetto shows global tracks.
      p->set_sort_index(INT32_MIN);
      p->set_has_sort_index(true);
      if (current_input_ >= 0) p->set_host(meta_.inputs(current_input_).host());
    }
    process = it->second;
  } else {
    process = Process(pid);
  }
  auto [it, inserted] = track_ids_.try_emplace(absl::StrCat(process, "\tI"), 0);
  if (inserted) {
    it->second = NewTrack(process, proto::Track::INSTANTS);
    resources_.mutable_tracks(it->second)->set_name(global ? "Global instants" : "Process instants");
  }
  return it->second;
}

void TableBuilder::SetProcessName(IdToken pid, std::string_view name) {
  resources_.mutable_processes(Process(pid))->set_name(std::string(name));
}

void TableBuilder::SetProcessSortIndex(IdToken pid, int64_t index) {
  proto::Process* p = resources_.mutable_processes(Process(pid));
  p->set_sort_index(index);
  p->set_has_sort_index(true);
}

void TableBuilder::AddProcessLabel(IdToken pid, std::string_view label) {
  resources_.mutable_processes(Process(pid))->add_labels(std::string(label));
}

void TableBuilder::SetThreadName(IdToken pid, IdToken tid, std::string_view name) {
  resources_.mutable_tracks(ThreadTrack(pid, tid))->set_name(std::string(name));
}

void TableBuilder::SetThreadSortIndex(IdToken pid, IdToken tid, int64_t index) {
  proto::Track* t = resources_.mutable_tracks(ThreadTrack(pid, tid));
  t->set_sort_index(index);
  t->set_has_sort_index(true);
}

void TableBuilder::SetInputField(std::string_view key, std::string_view json) {
  if (current_input_ < 0) return;
  (*meta_.mutable_inputs(current_input_)->mutable_fields())[std::string(key)] =
      std::string(json);
}

void TableBuilder::CountSkipped(std::string_view reason, uint64_t n) {
  (*meta_.mutable_skipped_counts())[std::string(reason)] += n;
}

void TableBuilder::Warn(std::string_view message) {
  // Bounded: a hostile input must not grow the metadata without limit.
  if (meta_.warnings_size() < 1000) {
    meta_.add_warnings(std::string(message));
  } else {
    CountSkipped("warnings beyond the first 1000");
  }
}

absl::Status TableBuilder::Add(const Event& e) {
  const bool async = IsMatchKind(e.kind) && e.kind >= EventKind::kAsyncBegin;
  if (async && e.track >= async_groups_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("async event on track ", e.track, ", which AsyncTrack never gave"));
  }
  SortRecord r;
  if (absl::Status s = TakeId(&r); !s.ok()) return s;
  // The id is used from here, not read back from r: it shares a word with
  // kind and flags, and reading that word right after kind's byte store
  // waited for the store to retire (store forwarding fails; 70% of
  // TakeId's samples when it came after).
  const uint64_t id = next_id_ - 1;
  r.track = e.track;
  r.kind = e.kind;
  r.ts = e.ts;
  r.dur = e.kind == EventKind::kSlice ? std::max<int64_t>(e.dur, 0) : 0;
  events_added_.store(id, std::memory_order_relaxed);
  if ((id & 0xFFFF) == 0) {
    if (absl::Status s = Stopped(); !s.ok()) return s;
  }
  r.name = e.name;
  if (r.name >= name_events_.size()) name_events_.resize(r.name + 1);
  if (name_events_[r.name] != UINT32_MAX) ++name_events_[r.name];
  r.cat = e.cat;
  r.flags = e.flags;
  r.flow_id = async && current_input_ > 0 ? InputAsyncKey(e.flow_id) : e.flow_id;
  if (e.kind == EventKind::kCounter) {
    r.set_value(e.value);  // event.h: only counters have a value
  } else {
    r.flow_out = e.flow_out;
    r.flow_in = e.flow_in;
  }
  if (!e.args_json.empty() && e.args_json != "{}") {
    r.flags |= kFlagHasArgs;
    if (absl::Status s = args_->Add(id, e.args_json); !s.ok()) return s;
  }
  if (e.dur < 0) CountSkipped("negative dur (stored as 0)");
  min_ts_ = std::min(min_ts_, r.ts);
  max_end_ = std::max(max_end_, r.ts + r.dur);
  if (e.thread_time != 0) {
    if (absl::Status s = NoteThreadTime(e, &r); !s.ok()) return s;
  }
  ++kind_counts_[static_cast<uint8_t>(e.kind)];
  if (current_input_ >= 0) ++input_events_[current_input_];
  if (memory_ && memory_->IsMemoryEvent(e)) {
    const uint32_t input = std::max(current_input_, 0);
    std::string_view host = current_input_ >= 0 ? std::string_view(meta_.inputs(current_input_).host()) : "";
    // Async events carry their group (AsyncTrack), which knows the process.
    const uint32_t process = async ? async_groups_[e.track].process
                             : e.track < static_cast<uint32_t>(resources_.tracks_size())
                                 ? resources_.tracks(e.track).process()
                                 : 0;
    if (absl::Status s = memory_->Observe(e, id, process, input, host, this); !s.ok()) return s;
  }
  if ((id & 0xFFFF) == 0) {
    if (absl::Status s = ChargeStrings(); !s.ok()) return s;
  }
  return IsMatchKind(r.kind) ? match_->Add(r) : main_->Add(r);
}

absl::Status TableBuilder::TakeId(SortRecord* r) {
  if (next_id_ >= kMaxEventIds) {
    return absl::ResourceExhaustedError(absl::StrCat("more than ", kMaxEventIds, " events in one table"));
  }
  r->id = next_id_++;
  return absl::OkStatus();
}

uint64_t TableBuilder::StringBytes() const {
  return static_cast<uint64_t>(std::max<int64_t>(shared_strings_.bytes(), 0)) +
         (strings_.capacity() + table_string_of_shared_.capacity() + name_events_.capacity()) *
             sizeof(uint32_t);
}

absl::Status TableBuilder::ChargeStrings() {
  const uint64_t budget = options_.memory_budget;
  const uint64_t strings = StringBytes();
  // Limits change in steps of 1/64 of the budget: each shrink may spill a
  // run, so not for every string.
  if (strings < charged_strings_ + budget / 64) return absl::OkStatus();
  charged_strings_ = strings;
  // At least 1/8 of the budget stays the sorters': past that the strings
  // alone are over the budget, and tiny runs would only slow the merge.
  const uint64_t left = std::max(budget - std::min(budget, strings), budget / 8);
  const size_t records = left / sizeof(SortRecord);
  // Strings only grow, so these only lower the limits.
  if (absl::Status s = main_->SetMaxRecords(MainRecordsLimit(records)); !s.ok()) return s;
  return match_->SetMaxRecords(records / 8);
}

size_t TableBuilder::MainRecordsLimit(size_t records_left) const {
  const size_t lent = lent_to_memory_ / sizeof(SortRecord);
  const size_t share = records_left / 4 * 3;
  return share > lent ? share - lent : 0;
}

// Kineto 10M's 1.25M memory records (134 MB) spilled 4 runs at 1/32 of the
// default budget while the main sorter filled 605 of its 768 MB: each
// write stalled the building thread, and merging them back slowed the
// derivation (0.52 s; 0.41 s held in memory). The main sorter
// lends in steps while twice a step is left above what it holds; past that
// (or 1/4 of the budget lent), memory records spill as before. The two
// shares together stay what they were.
absl::StatusOr<size_t> TableBuilder::LendToMemoryProfile() {
  const size_t step = options_.memory_budget / 32;
  const size_t main_step = step / sizeof(SortRecord);
  if (lent_to_memory_ + step > options_.memory_budget / 4) return 0;
  if (main_->max_records() < main_->buffered() + 2 * main_step) return 0;
  // Still above what the main sorter holds: nothing spills.
  if (absl::Status s = main_->SetMaxRecords(main_->max_records() - main_step); !s.ok()) return s;
  lent_to_memory_ += step;
  return step / sizeof(MemoryRecord);
}

absl::Status TableBuilder::NoteThreadTime(const Event& e, SortRecord* r) {
  switch (e.kind) {
    case EventKind::kSlice:
    case EventKind::kInstant: {
      ThreadTimeRecord t;
      t.id = r->id;
      t.tts = e.tts;
      t.tdur = e.tdur;
      t.what = e.thread_time & (kHasTts | kHasTdur);
      r->flags |= kFlagHasThreadTime;
      return thread_times_->Add(t);
    }
    case EventKind::kBegin:
    case EventKind::kEnd:
      // The pair's tdur is the difference of its ends' tts.
      if (e.thread_time & kHasTts) {
        r->flags |= kFlagHasThreadTime;
        r->dur = e.tts;
      }
      if (e.thread_time & kHasTdur) CountSkipped("tdur on a B/E event (thread time comes from the tts of B and E)");
      return absl::OkStatus();
    default:
      CountSkipped(absl::StrCat("thread time (tts/tdur) on phase '", KindName(e.kind), "' not stored; events kept"));
      return absl::OkStatus();
  }
}

absl::Status TableBuilder::WriteThreadTimes() {
  uint64_t block = 0;
  std::vector<ThreadTimeEntry> entries;
  auto flush = [&]() -> absl::Status {
    if (entries.empty()) return absl::OkStatus();
    std::string value = EncodeThreadTimeBlock(entries);
    entries.clear();
    return Put(ThreadTimeBlockKey(block), std::move(value));
  };
  absl::Status st = thread_times_->Merge(options_.memory_budget / 32, [&](const ThreadTimeRecord& t) -> absl::Status {
    const uint64_t b = t.id >> kArgsBlockShift;
    if (b != block) {
      if (absl::Status s = flush(); !s.ok()) return s;
      block = b;
    }
    ThreadTimeEntry e;
    e.slot = static_cast<uint32_t>(t.id & ((1u << kArgsBlockShift) - 1));
    if (t.what & kHasTts) e.tts = t.tts;
    if (t.what & kHasTdur) e.tdur = t.tdur;
    entries.push_back(e);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return flush();
}

absl::Status TableBuilder::Put(std::string key, std::string value) { return out_->Put(key, value); }

// Rare (an E with arguments): reads and rewrites whole blocks. Rewritten
// blocks wait in merged_args_ (the next merge may load them again) and go to
// files of their own when many, which Seal() merges over the originals.
absl::Status TableBuilder::MergeArgs(uint64_t into, uint64_t from) {
  auto load = [this](uint64_t block, std::vector<ArgsEntry>* entries) -> absl::Status {
    entries->clear();
    if (auto it = merged_args_.find(block); it != merged_args_.end()) {
      return it->second ? DecodeArgsBlock(*it->second, entries) : absl::OkStatus();
    }
    std::string value;
    absl::Status s = runs_->Get(ArgsBlockKey(block), &value);
    if (absl::IsNotFound(s)) return absl::OkStatus();
    if (!s.ok()) return s;
    return DecodeArgsBlock(value, entries);
  };
  auto store = [this](uint64_t block, std::optional<std::string> value) {
    merged_args_bytes_ += value ? value->size() + 64 : 64;
    merged_args_[block] = std::move(value);
  };
  auto take = [](std::vector<ArgsEntry>* b, uint32_t slot) {
    for (auto it = b->begin(); it != b->end(); ++it) {
      if (it->slot != slot) continue;
      std::string json = std::move(it->json);
      b->erase(it);
      return json;
    }
    return std::string();
  };
  const uint64_t from_block = from >> kArgsBlockShift, into_block = into >> kArgsBlockShift;
  const uint32_t mask = (1u << kArgsBlockShift) - 1;
  std::vector<ArgsEntry> fb, ib;
  if (absl::Status s = load(from_block, &fb); !s.ok()) return s;
  const std::string extra = take(&fb, static_cast<uint32_t>(from & mask));
  if (from_block != into_block) {
    store(from_block, fb.empty() ? std::nullopt : std::optional<std::string>(EncodeArgsBlock(fb)));
    if (absl::Status s = load(into_block, &ib); !s.ok()) return s;
  } else {
    ib = std::move(fb);
  }
  const uint32_t slot = static_cast<uint32_t>(into & mask);
  std::string merged = take(&ib, slot);
  if (merged.size() < 2) {
    merged = extra;
  } else if (extra.size() > 2) {
    // Both are JSON objects: "{a}" + "{b}" -> "{a,b}" (the end's keys last, so
    // they win for readers that keep the last duplicate, as Chrome does).
    size_t close = merged.rfind('}');
    size_t open = extra.find('{');
    std::string head = merged.substr(0, close);
    bool empty_head = head.find_first_not_of(" \t\r\n{") == std::string::npos;
    merged = absl::StrCat(head, empty_head ? "" : ",", extra.substr(open + 1));
  }
  auto pos = std::find_if(ib.begin(), ib.end(), [slot](const ArgsEntry& e) { return e.slot > slot; });
  ib.insert(pos, ArgsEntry{slot, std::move(merged)});
  store(into_block, EncodeArgsBlock(ib));
  return merged_args_bytes_ < options_.memory_budget / 32 ? absl::OkStatus() : FlushMergedArgs();
}

absl::Status TableBuilder::FlushMergedArgs() {
  if (merged_args_.empty()) return absl::OkStatus();
  std::unique_ptr<RunWriter> w = runs_->NewWriter();
  for (auto& [block, value] : merged_args_) {
    absl::Status s = value ? w->Put(ArgsBlockKey(block), *value) : w->Delete(ArgsBlockKey(block));
    if (!s.ok()) return s;
  }
  merged_args_.clear();
  merged_args_bytes_ = 0;
  return w->Close();
}

absl::Status TableBuilder::Stopped() const {
  if (options_.stop && options_.stop->load(std::memory_order_relaxed)) {
    return absl::CancelledError("interrupted");
  }
  return absl::OkStatus();
}

absl::Status TableBuilder::Tick(uint64_t* done, uint64_t total, std::string_view stage) {
  if ((++*done & 0xFFFF) != 0) return absl::OkStatus();
  if (absl::Status s = Stopped(); !s.ok()) return s;
  if ((*done & 0xFFFFF) == 0) Progress(stage, double(*done) / std::max<uint64_t>(total, 1));
  return absl::OkStatus();
}

void TableBuilder::Progress(std::string_view stage, double fraction) {
  if (options_.progress) options_.progress(stage, fraction);
}

absl::Status TableBuilder::MatchBeginEnd() {
  // Open begins, outermost first; `deepest` is the deepest stack index any
  // slice nested in the entry has reached (async nests need their height).
  struct Open {
    SortRecord begin;
    uint32_t deepest;
  };
  std::vector<Open> stack;
  bool have_group = false;
  bool group_async = false;
  uint32_t group = 0;
  const uint64_t total = std::max<size_t>(match_->size(), 1);
  uint64_t done = 0;
  // A begin's tts (held in its dur) becomes the slice's, and with its end's
  // tts gives the tdur.
  auto pair_thread_time = [&](const SortRecord& begin, const SortRecord* end) -> absl::Status {
    if (!(begin.flags & kFlagHasThreadTime)) {
      if (end && (end->flags & kFlagHasThreadTime)) CountSkipped("E with tts after a B without (thread time not stored)");
      return absl::OkStatus();
    }
    ThreadTimeRecord t;
    t.id = begin.id;
    t.tts = begin.dur;
    t.what = kHasTts;
    if (end && (end->flags & kFlagHasThreadTime)) {
      const __int128 d = static_cast<__int128>(end->dur) - begin.dur;
      if (d >= INT64_MIN && d <= INT64_MAX) {
        t.tdur = static_cast<int64_t>(d);
        t.what |= kHasTdur;
      }
    }
    return thread_times_->Add(t);
  };
  auto flush_unmatched = [&]() -> absl::Status {
    for (size_t i = stack.size(); i-- > 1;) stack[i - 1].deepest = std::max(stack[i - 1].deepest, stack[i].deepest);
    for (size_t i = 0; i < stack.size(); ++i) {
      SortRecord& b = stack[i].begin;
      if (group_async) {
        SetAsyncNest(&b, {stack.front().begin.id, static_cast<uint32_t>(i), stack[i].deepest - static_cast<uint32_t>(i) + 1});
      }
      if (absl::Status s = pair_thread_time(b, nullptr); !s.ok()) return s;
      b.kind = EventKind::kSlice;
      b.dur = max_end_ - b.ts;
      b.flags |= kFlagIncomplete | (group_async ? kFlagAsync : kFlagFromBeginEnd);
      CountSkipped(group_async ? "b without matching e (kept as incomplete)"
                               : "B without matching E (kept as incomplete)",
                   1);
      if (absl::Status s = main_->Add(b); !s.ok()) return s;
    }
    stack.clear();
    return absl::OkStatus();
  };
  absl::Status st = match_->Merge(options_.memory_budget / 4, [&](const SortRecord& r) -> absl::Status {
    if (absl::Status s = Tick(&done, total, "matching begin/end"); !s.ok()) return s;
    const bool async = r.kind >= EventKind::kAsyncBegin;
    const uint32_t g = async ? r.flow_id : r.track;
    if (!have_group || g != group || async != group_async) {
      if (absl::Status s = flush_unmatched(); !s.ok()) return s;
      have_group = true;
      group = g;
      group_async = async;
    }
    switch (r.kind) {
      case EventKind::kBegin:
        stack.push_back({r, static_cast<uint32_t>(stack.size())});
        return absl::OkStatus();
      case EventKind::kAsyncBegin: {
        // A nest lives on the track of its outermost slice's name.
        Open o{r, static_cast<uint32_t>(stack.size())};
        o.begin.track = stack.empty() ? AsyncGroupTrack(r.track) : stack.front().begin.track;
        stack.push_back(o);
        return absl::OkStatus();
      }
      case EventKind::kAsyncInstant: {
        SortRecord n = r;
        n.kind = EventKind::kInstant;
        n.track = stack.empty() ? AsyncGroupTrack(r.track) : stack.front().begin.track;
        return main_->Add(n);
      }
      default:
        break;
    }
    if (stack.empty()) {
      CountSkipped(async ? "e without matching b" : "E without matching B", 1);
      return absl::OkStatus();
    }
    const uint32_t depth = static_cast<uint32_t>(stack.size() - 1);
    const uint32_t deepest = stack.back().deepest;
    SortRecord slice = stack.back().begin;
    if (async) SetAsyncNest(&slice, {stack.front().begin.id, depth, deepest - depth + 1});
    stack.pop_back();
    if (!stack.empty()) stack.back().deepest = std::max(stack.back().deepest, deepest);
    if (absl::Status s = pair_thread_time(slice, &r); !s.ok()) return s;
    slice.kind = EventKind::kSlice;
    slice.dur = r.ts - slice.ts;
    if (slice.name == 0) slice.name = r.name;
    if (slice.cat == 0) slice.cat = r.cat;
    slice.flags |= async ? kFlagAsync : kFlagFromBeginEnd;
    if (r.flags & kFlagHasArgs) {
      if (absl::Status s = MergeArgs(slice.id, r.id); !s.ok()) return s;
      slice.flags |= kFlagHasArgs;
    }
    return main_->Add(slice);
  });
  if (!st.ok()) return st;
  return flush_unmatched();
}

absl::Status TableBuilder::DeriveMemoryProfile(MainSorter* counters) {
  MemoryProfileBuilder::Output out;
  out.new_counter_track = [this](uint32_t process, std::string_view counter, std::string_view series) {
    const uint32_t t = NewTrack(process, proto::Track::COUNTER);
    resources_.mutable_tracks(t)->set_name(std::string(counter));
    resources_.mutable_tracks(t)->set_series(std::string(series));
    resources_.mutable_tracks(t)->set_derived(true);
    return t;
  };
  out.add_counter = [this, counters](uint32_t track, uint32_t name, int64_t ts, double value) {
    SortRecord r;
    r.track = track;
    r.kind = EventKind::kCounter;
    r.ts = ts;
    if (absl::Status s = TakeId(&r); !s.ok()) return s;
    r.name = name;
    r.set_value(value);
    return counters->Add(r);
  };
  out.put = [this](std::string k, std::string v) { return Put(std::move(k), std::move(v)); };
  absl::Status s = memory_->Finish(options_.memory_budget / 8, this, out, meta_.mutable_memory());
  memory_.reset();
  stats_.memory_report = MemoryProfileBuilder::UnpairedSummary(meta_.memory());
  return s;
}

int TableBuilder::TileThreads() const {
  return options_.tile_threads > 0 ? options_.tile_threads
                                   : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
}

absl::StatusOr<std::vector<TableBuilder::TrackRecords>> TableBuilder::SortTracks(
    std::unique_ptr<MainSorter>* counters) {
  // The memory profile's counters are on tracks of their own, so they go to
  // a sorter of their own, and the profile is derived on a thread while the
  // main sorter sorts: one after the other, each left a core idle (Kineto
  // 3M: 0.13 s of derivation on one core, then the sort on two).
  absl::Status memory_status;
  std::thread memory_thread;
  if (memory_) {
    Progress("deriving the memory profile", 0.0);
    // The main sorter's room left, or at least the memory profile's own
    // share (its records are freed as the counters come): counters spill
    // in runs of that size, not of a full main sorter's 1024 records.
    const size_t room = main_->max_records() - std::min(main_->max_records(), main_->buffered());
    *counters = std::make_unique<MainSorter>(temp_dir_ + "-spill/counters", TrackTimeOrder{},
                                             std::max(room, options_.memory_budget / 32 / sizeof(SortRecord)));
    (*counters)->PartitionByGroupFirst();
    memory_thread = std::thread([&] {
      NameThisThread("tt-memory");
      memory_status = DeriveMemoryProfile(counters->get());
    });
  }
  absl::StatusOr<std::vector<MainSorter::Group>> main_groups = main_->SortGroups();
  if (memory_thread.joinable()) memory_thread.join();
  if (!memory_status.ok()) return memory_status;
  if (!main_groups.ok()) return main_groups.status();
  std::vector<TrackRecords> tracks;
  for (MainSorter::Group& g : *main_groups) tracks.push_back({main_.get(), std::move(g)});
  if (*counters) {
    absl::StatusOr<std::vector<MainSorter::Group>> counter_groups = (*counters)->SortGroups();
    if (!counter_groups.ok()) return counter_groups.status();
    const size_t from_main = tracks.size();
    for (MainSorter::Group& g : *counter_groups) tracks.push_back({counters->get(), std::move(g)});
    // Both lists are in track order.
    std::inplace_merge(tracks.begin(), tracks.begin() + static_cast<ptrdiff_t>(from_main), tracks.end(),
                       [](const TrackRecords& a, const TrackRecords& b) { return a.group.key < b.group.key; });
  }
  stats_.spill_runs = main_->runs() + (*counters ? (*counters)->runs() : 0);
  return tracks;
}

absl::Status TableBuilder::WriteTiles() {
  std::unique_ptr<MainSorter> counters;
  absl::StatusOr<std::vector<TrackRecords>> groups = SortTracks(&counters);
  if (!groups.ok()) return groups.status();
  Progress("writing tiles", 0.0);
  int num_levels = NumLevelsForSpan(max_end_ - min_ts_);
  // Summary bins are aligned at min_ts and stop at num_levels: a run's
  // shards take the run's grid when their events fit in it.
  if (const std::optional<TableGrid>& g = options_.grid;
      g && min_ts_ >= g->min_ts && num_levels <= g->num_levels &&
      NumLevelsForSpan(max_end_ - g->min_ts) <= g->num_levels) {
    min_ts_ = g->min_ts;
    num_levels = g->num_levels;
  }
  meta_.set_num_levels(num_levels);
  const uint64_t records = main_->size() + (counters ? counters->size() : 0);
  TrackPoolOptions po;
  po.threads = TileThreads();
  po.num_levels = num_levels;
  po.min_ts = min_ts_;
  // A track's events wait here until the track ends; bigger tracks spill.
  po.placed_records = options_.memory_budget / 16 / po.threads / sizeof(PlacedRecord);
  po.spill_prefix = temp_dir_ + "-spill/placed";
  // A track's summaries wait until its events are written. Past this they
  // go to files that overlap and are merged when sealing, on one thread at
  // the very end: Kineto 10M's three biggest tracks hold 8-9 MiB each,
  // which 1/64 of the default budget per worker sent there (25.7 MiB, 0.23 s).
  po.held_bytes = std::max<size_t>(options_.memory_budget / 32 / po.threads, 1 << 20);
  po.runs = runs_.get();
  po.resources = &resources_;
  // The main sorter takes no more records: what its share holds unused
  // goes to the postings too, half to each index's, which past their own
  // share of the budget spill (gen 10M: 8.2M name postings, 66 MB, two
  // runs per partition, and each name's ranks then need a sort of their
  // own; Kineto 10M: 3M flow postings, 24 MB, and 62 MB unused).
  const size_t main_used = main_->buffered() + (counters ? counters->buffered() : 0);
  const size_t main_unused = (main_->max_records() - std::min(main_->max_records(), main_used)) * sizeof(SortRecord);
  search_index_->SetMemory(options_.memory_budget / 32 + main_unused / 2);
  if (absl::Status s = flow_index_->SetMemory(options_.memory_budget / 64 + main_unused / 2); !s.ok()) return s;
  // Its chunks are written on as many threads as tiles are (Finish()).
  search_index_->Partition(name_events_, po.threads);
  name_events_ = {};
  po.search_index = search_index_.get();
  po.flow_index = flow_index_.get();
  std::optional<StatsGrid> grid;
  if (options_.stats_bucket_events > 0) {
    const int64_t span = max_end_ - min_ts_;
    const uint32_t log2 = StatsBucketLog2(span, records, options_.stats_bucket_events);
    grid = StatsGrid{min_ts_, log2, StatsLevels(span, log2)};
  }
  po.stats_grid = grid;
  const size_t threads = static_cast<size_t>(po.threads);
  TrackPool pool(std::move(po));
  std::vector<TrackPool::Track> tracks;
  tracks.reserve(groups->size());
  for (const TrackRecords& t : *groups) tracks.push_back({static_cast<uint32_t>(t.group.key), t.group.records});
  // Every worker reads a spilled run through a buffer of its own.
  const int runs = std::max({main_->runs(), counters ? counters->runs() : 0, 1});
  const size_t buffer_records = std::clamp<size_t>(
      options_.memory_budget / 4 / (threads * static_cast<size_t>(runs) * sizeof(SortRecord)), 1024, 1 << 16);
  const uint64_t total = std::max<size_t>(records, 1);
  uint64_t ticked = 0;
  absl::Status st = pool.Run(
      tracks,
      [&](size_t index, const TrackPool::EmitFn& emit) {
        const TrackRecords& t = (*groups)[index];
        return t.sorter->ReadGroup(t.group, buffer_records, emit);
      },
      [&](uint64_t done) {
        if (absl::Status s = Stopped(); !s.ok()) return s;
        // Progress about once a second.
        if (++ticked % 10 == 0) Progress("writing tiles", double(done) / total);
        return absl::OkStatus();
      });
  main_->Clear();
  if (counters) counters->Clear();
  if (!st.ok()) return st;
  stats_.events += pool.stats().events;
  stats_.tiles += pool.stats().tiles;
  stats_.tile_bytes += pool.stats().tile_bytes;
  if (grid) {
    proto::StatsIndexInfo* info = meta_.mutable_stats_index();
    info->set_bucket_log2(grid->log2);
    info->set_levels(grid->levels);
    info->set_buckets(pool.stats().stats_buckets);
    info->set_bytes(pool.stats().stats_bytes);
  }
  for (const proto::Track& t : resources_.tracks()) {
    meta_.set_max_depth(std::max(meta_.max_depth(), t.max_depth()));
  }
  return absl::OkStatus();
}

namespace {

// Writers of their own for a producer that writes from several threads, a
// put function through each.
class OwnWriters {
 public:
  using PutFn = std::function<absl::Status(std::string key, std::string value)>;

  OwnWriters(SortedRuns* runs, int n) {
    for (int i = 0; i < n; ++i) {
      RunWriter* w = writers_.emplace_back(runs->NewWriter()).get();
      puts_.push_back([w](std::string k, std::string v) { return w->Put(k, v); });
    }
  }
  const std::vector<PutFn>& puts() const { return puts_; }
  absl::Status Close() {
    for (auto& w : writers_) {
      if (absl::Status s = w->Close(); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  std::vector<std::unique_ptr<RunWriter>> writers_;
  std::vector<PutFn> puts_;
};

}  // namespace

absl::Status TableBuilder::WriteSearchIndex(proto::SearchIndexInfo* info) {
  // Writers per partition, for chunks and for name groups: their key
  // ranges follow one another.
  OwnWriters chunks(runs_.get(), search_index_->partitions());
  OwnWriters groups(runs_.get(), search_index_->partitions());
  if (absl::Status s = search_index_->Finish(options_.memory_budget / 4, chunks.puts(), groups.puts(), info);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = chunks.Close(); !s.ok()) return s;
  return groups.Close();
}

absl::Status TableBuilder::WriteFlowIndex() {
  // A writer per thread, as many as build tiles: each takes a run of blocks.
  OwnWriters blocks(runs_.get(), TileThreads());
  if (absl::Status s = flow_index_->Finish(options_.memory_budget / 8, blocks.puts(), meta_.mutable_flow_index());
      !s.ok()) {
    return s;
  }
  return blocks.Close();
}

absl::Status TableBuilder::WriteStrings(uint32_t* chunks) {
  std::unique_ptr<RunWriter> out = runs_->NewWriter();
  proto::StringChunk c;  // cleared, not remade: its strings keep their buffers
  for (size_t first = 0, chunk = 0; first < strings_.size(); first += kStringsPerChunk, ++chunk) {
    c.Clear();
    const size_t last = std::min(strings_.size(), first + kStringsPerChunk);
    for (size_t i = first; i < last; ++i) c.add_strings()->assign(shared_strings_.Text(strings_[i]));
    if (absl::Status s = out->Put(StringChunkKey(chunk), c.SerializeAsString()); !s.ok()) return s;
    *chunks = static_cast<uint32_t>(chunk + 1);
  }
  return out->Close();
}

absl::Status TableBuilder::WriteTables() {
  const bool several_inputs = meta_.inputs_size() > 1;
  for (proto::Process& p : *resources_.mutable_processes()) {
    int64_t pid = 0;
    const bool numeric = p.pid_is_number() && absl::SimpleAtoi(p.pid(), &pid);
    p.set_out_pid(several_inputs || !numeric ? p.id() + 1 : pid);
    if (several_inputs && !p.host().empty()) {
      p.set_name(absl::StrCat(p.host(), " ", p.name().empty() ? absl::StrCat("pid ", p.pid()) : p.name()));
    }
  }
  for (proto::Track& t : *resources_.mutable_tracks()) {
    int64_t tid = 0;
    if (t.kind() == proto::Track::THREAD && t.tid_is_number() && absl::SimpleAtoi(t.tid(), &tid)) {
      t.set_out_tid(tid);
    } else {
      t.set_out_tid(kSyntheticTidBase + t.id());
    }
  }
  for (size_t k = 0; k < kind_counts_.size(); ++k) {
    if (kind_counts_[k] > 0) {
      (*meta_.mutable_phase_counts())[KindName(static_cast<EventKind>(k))] = kind_counts_[k];
    }
  }
  for (size_t i = 0; i < input_events_.size(); ++i) meta_.mutable_inputs(i)->set_events(input_events_[i]);
  meta_.set_format_version(kFormatVersion);
  meta_.set_origin_ns(origin_ns_);
  meta_.set_min_ts(min_ts_ == INT64_MAX ? 0 : min_ts_);
  meta_.set_max_end(max_end_ == INT64_MIN ? 0 : max_end_);
  meta_.set_num_events(stats_.events);
  meta_.set_event_ids(next_id_ - 1);
  meta_.set_num_strings(strings_.size());
  meta_.set_created_by("tracetable " TRACETABLE_VERSION);
  meta_.set_table_id(NewTableId());
  if (absl::Status s = Put(kResourcesKey, resources_.SerializeAsString()); !s.ok()) return s;
  return Put(kMetaKey, meta_.SerializeAsString());
}

absl::Status TableBuilder::Finish() {
  if (min_ts_ == INT64_MAX) min_ts_ = max_end_ = 0;
  if (strings_.size() > kMaxStringIds) {
    // Their ids would read as numeric flow ids (format/flow_id.h).
    return absl::ResourceExhaustedError(absl::StrCat("the trace has ", strings_.size(),
                                                     " distinct strings; a table holds at most ", kMaxStringIds));
  }
  // Reading is over. The main sorter gets at most one record per B/E to
  // match (the memory profile's counters have a sorter of their own):
  // warming its buffer further faults in pages no record will use, on the
  // core the matching and the sort want (gen 1M: up to 24 MB).
  main_->ExpectAtMost(match_->size());
  // The argument blocks' files close: merging B's and E's arguments reads
  // them, and rewrites them through writers started after.
  if (absl::Status s = args_->Close(); !s.ok()) return s;
  Progress("matching begin/end", 0.0);
  if (absl::Status s = MatchBeginEnd(); !s.ok()) return s;
  // Destroyed once the main sorter's page warmer has stopped (ReleasePages).
  match_->ReleasePages();
  if (absl::Status s = FlushMergedArgs(); !s.ok()) return s;
  Progress("writing thread times", 0.0);
  if (absl::Status s = WriteThreadTimes(); !s.ok()) return s;
  thread_times_->ReleasePages();
  if (absl::Status s = WriteTiles(); !s.ok()) return s;
  main_.reset();
  match_.reset();
  thread_times_.reset();
  Progress("writing the indexes", 0.0);
  // The search index (its sort and chunks) and the string table are
  // written beside the flow index, each on threads and through writers of
  // its own: one thread would do all three with the other core idle (Kineto
  // 10M: 2M strings). The files are copied in key order later, so the
  // order of writes is moot.
  proto::SearchIndexInfo search_info;
  absl::Status search_status, strings_status;
  uint32_t string_chunks = 0;
  std::thread search([&] {
    NameThisThread("tt-search");
    search_status = WriteSearchIndex(&search_info);
  });
  std::thread strings([&] {
    NameThisThread("tt-strings");
    strings_status = WriteStrings(&string_chunks);
  });
  // Short tracks' tiles, held since the tiles were built: written beside
  // the indexes, not alone at the seal (gen 1M: every track is short, 12.5
  // MiB, 0.04 s on one core at the very end), nor after the flow index
  // (Kineto 10M: 0.02 s on one core).
  absl::Status small_status;
  std::thread small([&] {
    NameThisThread("tt-small");
    small_status = runs_->FlushSmall();
  });
  absl::Status st = WriteFlowIndex();
  flow_index_.reset();
  search.join();
  strings.join();
  small.join();
  search_index_.reset();
  if (!st.ok()) return st;
  if (!search_status.ok()) return search_status;
  if (!strings_status.ok()) return strings_status;
  if (!small_status.ok()) return small_status;
  *meta_.mutable_search_index() = search_info;
  meta_.set_num_string_chunks(string_chunks);
  Progress("writing tables", 0.0);
  if (absl::Status s = WriteTables(); !s.ok()) return s;
  if (absl::Status s = out_->Close(); !s.ok()) return s;
  Progress("sealing files", 0.0);
  uint64_t copied = 0;
  if (absl::Status s = runs_->Seal([&] { return Tick(&copied, meta_.num_events() + 1, "sealing files"); });
      !s.ok()) {
    return s;
  }
  Progress("sealing files", 1.0);
  stats_.sealed_copy_bytes = runs_->bytes_copied();
  // Again: the path may have changed hands while we built.
  if (absl::Status s = CheckOutputFree(); !s.ok()) return s;
  const std::string& out = options_.output;
  std::error_code ec;
  const bool replace = fs::exists(fs::symlink_status(out, ec));
  // One rename either way: OUT is never missing nor half written, and a
  // path that appeared since the check is not overwritten.
  if (::renameat2(AT_FDCWD, temp_dir_.c_str(), AT_FDCWD, out.c_str(),
                  replace ? RENAME_EXCHANGE : RENAME_NOREPLACE) != 0) {
    return absl::InternalError(absl::StrCat("cannot rename ", temp_dir_, " to ", out, ": ",
                                            std::strerror(errno)));
  }
  finished_ = true;
  if (replace) fs::remove_all(temp_dir_, ec);  // now the old table
  return absl::OkStatus();
}

absl::Status TableBuilder::CheckOutputFree() const {
  const std::string& out = options_.output;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(out, ec))) return absl::OkStatus();
  if (!options_.overwrite) {
    return absl::AlreadyExistsError(absl::StrCat(out, ": already exists (use --force to replace a table)"));
  }
  return options_.overwrite_unread ? CheckReplaceableUnread(out) : CheckReplaceable(out);
}

}  // namespace tracetable
