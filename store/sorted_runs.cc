#include "store/sorted_runs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <cstring>
#include <filesystem>
#include <queue>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/absl_compat.h"
#include "leveldb/cache.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"
#include "store/file_list.h"
#include "store/internal_key.h"
#include "store/pread_env.h"

namespace tracetable {
namespace fs = std::filesystem;
namespace {

absl::Status Failed(const leveldb::Status& s, std::string_view what) {
  return absl::InternalError(absl::StrCat(Av(what), ": ", s.ToString()));
}

leveldb::Options FileOptions() {
  leveldb::Options opts;
  opts.comparator = InternalKeyOrder();
  opts.compression = leveldb::kSnappyCompression;
  opts.block_size = 32 << 10;
  return opts;
}

std::string MakeKey(std::string_view user_key, bool deletion) {
  std::string k = MakeInternalKey(user_key, 1);
  if (deletion) k[k.size() - 8] = 0;  // the tag's low byte is the type
  return k;
}

// Keys of one kind (docs/format.md: the first byte) share files.
bool SameKeySpace(std::string_view a, std::string_view b) { return a.substr(0, 1) == b.substr(0, 1); }

}  // namespace

// A file being written: the records of one writer between two cuts, or a
// side buffer, or a merge's output.
struct RunWriter::OpenFile {
  std::unique_ptr<leveldb::WritableFile> file;
  std::unique_ptr<leveldb::TableBuilder> builder;
  leveldb::Options options = FileOptions();
  SortedRuns::Run run;
  bool empty = true;

  static absl::StatusOr<std::unique_ptr<OpenFile>> Start(std::pair<std::string, uint64_t> name) {
    auto f = std::make_unique<OpenFile>();
    f->run.path = std::move(name.first);
    f->run.rank = name.second;
    leveldb::WritableFile* raw = nullptr;
    if (leveldb::Status s = leveldb::Env::Default()->NewWritableFile(f->run.path, &raw); !s.ok()) {
      return Failed(s, "cannot create a table file");
    }
    f->file.reset(raw);
    f->builder = std::make_unique<leveldb::TableBuilder>(f->options, f->file.get());
    return f;
  }

  void Add(std::string_view key, std::string_view value, bool deletion) {
    if (empty) run.smallest = std::string(key);
    empty = false;
    run.largest.assign(key);
    run.deletions |= deletion;
    builder->Add(MakeKey(key, deletion), leveldb::Slice(value.data(), value.size()));
  }

  uint64_t bytes() const { return builder->FileSize(); }

  // The finished run (bytes 0 and no file left if nothing was added).
  absl::StatusOr<SortedRuns::Run> Finish() {
    leveldb::Status s = builder->Finish();
    if (s.ok()) s = file->Close();
    run.bytes = builder->FileSize();
    builder.reset();
    file.reset();
    if (!s.ok()) return Failed(s, absl::StrCat("cannot write ", run.path));
    if (empty) {
      std::error_code ec;
      fs::remove(run.path, ec);
      run.bytes = 0;
    }
    return run;
  }

  ~OpenFile() {
    if (builder) builder->Abandon();
  }
};

RunWriter::RunWriter(SortedRuns* runs, size_t side_bytes) : runs_(runs), side_limit_(side_bytes) {}

RunWriter::~RunWriter() = default;

absl::Status RunWriter::Put(std::string_view key, std::string_view value) { return Add(key, value, false); }

absl::Status RunWriter::Delete(std::string_view key) { return Add(key, {}, true); }

absl::Status RunWriter::Add(std::string_view key, std::string_view value, bool deletion) {
  if (have_last_ && key <= std::string_view(last_key_)) {
    side_.push_back(SideRecord{std::string(key), std::string(value), deletion});
    side_bytes_ += key.size() + value.size() + sizeof(SideRecord);
    return side_bytes_ >= side_limit_ ? FlushSide() : absl::OkStatus();
  }
  // A key space (the first byte: tiles, arguments, an index...) gets files
  // of its own: a writer that goes on to another one leaves no file whose
  // range spans other writers' key spaces.
  if (file_ && have_last_ && !SameKeySpace(key, last_key_)) {
    if (absl::Status s = EndFile(&file_); !s.ok()) return s;
  }
  if (!file_) {
    absl::StatusOr<std::unique_ptr<OpenFile>> f = OpenFile::Start(runs_->StartFile());
    if (!f.ok()) return f.status();
    file_ = std::move(*f);
  }
  file_->Add(key, value, deletion);
  last_key_.assign(key);
  have_last_ = true;
  // A full file ends; the run goes on in a new one (keys at or below the
  // last still go aside).
  return file_->bytes() < runs_->max_file_bytes() ? absl::OkStatus() : EndFile(&file_);
}

absl::Status RunWriter::EndFile(std::unique_ptr<OpenFile>* file) { return runs_->EndFile(file, nullptr); }

absl::Status RunWriter::Cut() {
  if (absl::Status s = EndFile(&file_); !s.ok()) return s;
  have_last_ = false;
  // What was put aside before the cut must rank below files started after it.
  return FlushSide();
}

absl::Status RunWriter::Close() { return Cut(); }

absl::Status RunWriter::FlushSide() {
  if (side_.empty()) return absl::OkStatus();
  // By key; among equal keys the last put first, and only it is written.
  std::vector<size_t> order(side_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (int c = side_[a].key.compare(side_[b].key); c != 0) return c < 0;
    return a > b;
  });
  // One file per key space, as in Add().
  std::unique_ptr<OpenFile> file;
  for (size_t i = 0; i < order.size(); ++i) {
    const SideRecord& r = side_[order[i]];
    if (i > 0) {
      const std::string& previous = side_[order[i - 1]].key;
      if (r.key == previous) continue;
      if (!SameKeySpace(r.key, previous)) {
        if (absl::Status s = EndFile(&file); !s.ok()) return s;
      }
    }
    if (!file) {
      absl::StatusOr<std::unique_ptr<OpenFile>> f = OpenFile::Start(runs_->StartFile());
      if (!f.ok()) return f.status();
      file = std::move(*f);
    }
    file->Add(r.key, r.value, r.deletion);
  }
  side_.clear();
  side_bytes_ = 0;
  return EndFile(&file);
}

struct SortedRuns::Reader {
  std::unique_ptr<leveldb::RandomAccessFile> file;
  std::unique_ptr<leveldb::Table> table;
};

SortedRuns::SortedRuns(std::string dir) : dir_(std::move(dir)) {}

SortedRuns::~SortedRuns() {
  readers_.clear();
  delete cache_;
}

std::unique_ptr<RunWriter> SortedRuns::NewWriter(size_t side_bytes) {
  return std::unique_ptr<RunWriter>(new RunWriter(this, side_bytes));
}

std::pair<std::string, uint64_t> SortedRuns::StartFile() {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t rank = next_rank_++;
  return {(fs::path(dir_) / absl::StrFormat("run-%06d.sst", rank)).string(), rank};
}

absl::Status SortedRuns::EndFile(std::unique_ptr<RunWriter::OpenFile>* file, std::vector<Run>* out) {
  if (!*file) return absl::OkStatus();
  absl::StatusOr<Run> run = (*file)->Finish();
  file->reset();
  if (!run.ok()) return run.status();
  // A small file is most likely merged by Seal(): removing it is cheaper
  // with no writeback under way.
  if (run->bytes > 0 && (out || run->bytes >= small_file_bytes_)) syncer_.Add(run->path);
  if (!out) {
    AddRun(std::move(*run));
  } else {
    bytes_copied_ += run->bytes;
    if (run->bytes > 0) out->push_back(std::move(*run));
  }
  return absl::OkStatus();
}

void SortedRuns::AddRun(Run run) {
  if (run.bytes == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  runs_.push_back(std::move(run));
}

uint64_t SortedRuns::bytes_written() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const Run& r : runs_) n += r.bytes;
  return n;
}

absl::StatusOr<SortedRuns::Reader*> SortedRuns::Open(const Run& run) {
  auto it = readers_.find(run.rank);
  if (it != readers_.end()) return it->second.get();
  auto r = std::make_unique<Reader>();
  leveldb::RandomAccessFile* raw = nullptr;
  if (leveldb::Status s = PreadEnv()->NewRandomAccessFile(run.path, &raw); !s.ok()) {
    return Failed(s, "cannot open a table file");
  }
  r->file.reset(raw);
  leveldb::Options opts = FileOptions();
  if (!cache_) cache_ = leveldb::NewLRUCache(8 << 20);
  opts.block_cache = cache_;
  leveldb::Table* table = nullptr;
  if (leveldb::Status s = leveldb::Table::Open(opts, r->file.get(), run.bytes, &table); !s.ok()) {
    return Failed(s, absl::StrCat("cannot read ", run.path));
  }
  r->table.reset(table);
  return (readers_[run.rank] = std::move(r)).get();
}

absl::Status SortedRuns::AddSmall(std::vector<std::pair<std::string, std::string>> records) {
  std::vector<std::pair<std::string, std::string>> full;
  {
    std::lock_guard<std::mutex> lock(small_mu_);
    for (auto& r : records) {
      small_bytes_ += r.first.size() + r.second.size();
      small_.push_back(std::move(r));
    }
    if (small_bytes_ < small_limit_) return absl::OkStatus();
    full.swap(small_);
    small_bytes_ = 0;
  }
  return WriteSmall(std::move(full));
}

absl::Status SortedRuns::FlushSmall() {
  std::vector<std::pair<std::string, std::string>> small;
  {
    std::lock_guard<std::mutex> lock(small_mu_);
    small.swap(small_);
    small_bytes_ = 0;
  }
  return WriteSmall(std::move(small));
}

absl::Status SortedRuns::WriteSmall(std::vector<std::pair<std::string, std::string>> records) {
  if (records.empty()) return absl::OkStatus();
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // Where the files closed so far begin: a stretch is cut before each.
  std::vector<std::string> starts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Run& r : runs_) starts.push_back(r.smallest);
  }
  std::sort(starts.begin(), starts.end());
  std::unique_ptr<RunWriter::OpenFile> file;
  const std::string* previous = nullptr;
  for (const auto& [key, value] : records) {
    if (previous) {
      auto next_start = std::upper_bound(starts.begin(), starts.end(), *previous);
      const bool cut = !SameKeySpace(key, *previous) ||
                       (next_start != starts.end() && *next_start <= key) ||
                       (file && file->bytes() >= max_file_bytes_);
      if (cut) {
        if (absl::Status s = EndFile(&file, nullptr); !s.ok()) return s;
      }
    }
    if (!file) {
      absl::StatusOr<std::unique_ptr<RunWriter::OpenFile>> f = RunWriter::OpenFile::Start(StartFile());
      if (!f.ok()) return f.status();
      file = std::move(*f);
    }
    file->Add(key, value, false);
    previous = &key;
  }
  return EndFile(&file, nullptr);
}

absl::Status SortedRuns::Get(std::string_view key, std::string* value) {
  std::vector<const Run*> candidates;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Run& r : runs_) {
      if (std::string_view(r.smallest) <= key && key <= std::string_view(r.largest)) candidates.push_back(&r);
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const Run* a, const Run* b) { return a->rank > b->rank; });
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  for (const Run* run : candidates) {
    absl::StatusOr<Reader*> reader = Open(*run);
    if (!reader.ok()) return reader.status();
    std::unique_ptr<leveldb::Iterator> it((*reader)->table->NewIterator(ro));
    it->Seek(SeekKey(key));
    if (!it->status().ok()) return Failed(it->status(), absl::StrCat("reading ", run->path));
    ParsedInternalKey p;
    if (!it->Valid() || !ParseInternalKey({it->key().data(), it->key().size()}, &p) || p.user_key != key) continue;
    if (!p.is_value) break;
    value->assign(it->value().data(), it->value().size());
    return absl::OkStatus();
  }
  return absl::NotFoundError(Av(key));
}

absl::Status SortedRuns::MergeInto(const std::vector<const Run*>& inputs, std::vector<Run>* out,
                                   const std::function<absl::Status()>& tick) {
  struct Source {
    std::unique_ptr<leveldb::RandomAccessFile> file;
    std::unique_ptr<leveldb::Table> table;
    std::unique_ptr<leveldb::Iterator> it;
    const Run* run;
    ParsedInternalKey key;
  };
  std::vector<Source> sources(inputs.size());
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  auto parse = [](Source* s) -> absl::Status {
    if (!ParseInternalKey({s->it->key().data(), s->it->key().size()}, &s->key)) {
      return absl::InternalError(absl::StrCat(s->run->path, ": malformed key"));
    }
    return absl::OkStatus();
  };
  // Smallest user key first; of equal keys the newest run first.
  auto later = [&](size_t a, size_t b) {
    if (int c = sources[a].key.user_key.compare(sources[b].key.user_key); c != 0) return c > 0;
    return sources[a].run->rank < sources[b].run->rank;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (size_t i = 0; i < inputs.size(); ++i) {
    Source& s = sources[i];
    s.run = inputs[i];
    leveldb::RandomAccessFile* raw = nullptr;
    if (leveldb::Status st = PreadEnv()->NewRandomAccessFile(s.run->path, &raw); !st.ok()) {
      return Failed(st, "cannot open a table file");
    }
    s.file.reset(raw);
    leveldb::Table* table = nullptr;
    if (leveldb::Status st = leveldb::Table::Open(FileOptions(), s.file.get(), s.run->bytes, &table); !st.ok()) {
      return Failed(st, absl::StrCat("cannot read ", s.run->path));
    }
    s.table.reset(table);
    s.it.reset(table->NewIterator(ro));
    s.it->SeekToFirst();
    if (!s.it->Valid()) {
      if (!s.it->status().ok()) return Failed(s.it->status(), absl::StrCat("reading ", s.run->path));
      continue;
    }
    if (absl::Status st = parse(&s); !st.ok()) return st;
    heap.push(i);
  }
  std::unique_ptr<RunWriter::OpenFile> file;
  std::string last;
  bool have_last = false;
  while (!heap.empty()) {
    const size_t i = heap.top();
    heap.pop();
    Source& s = sources[i];
    // The first of a user key is its newest version; older ones are dropped.
    if (!have_last || s.key.user_key != last) {
      last.assign(s.key.user_key);
      have_last = true;
      if (s.key.is_value) {
        if (absl::Status st = tick(); !st.ok()) return st;
        if (!file) {
          absl::StatusOr<std::unique_ptr<RunWriter::OpenFile>> f = RunWriter::OpenFile::Start(StartFile());
          if (!f.ok()) return f.status();
          file = std::move(*f);
        }
        file->Add(s.key.user_key, {s.it->value().data(), s.it->value().size()}, false);
        if (file->bytes() >= max_file_bytes_) {
          if (absl::Status st = EndFile(&file, out); !st.ok()) return st;
        }
      }
    }
    s.it->Next();
    if (s.it->Valid()) {
      if (absl::Status st = parse(&s); !st.ok()) return st;
      heap.push(i);
    } else if (!s.it->status().ok()) {
      return Failed(s.it->status(), absl::StrCat("reading ", s.run->path));
    }
  }
  return EndFile(&file, out);
}

void SortedRuns::RemoveFiles(const std::vector<const Run*>& runs) {
  std::error_code ec;
  for (const Run* r : runs) fs::remove(r->path, ec);
}

absl::Status SortedRuns::Reduce(std::vector<const Run*>* component, std::deque<Run>* reduced,
                                const std::function<absl::Status()>& tick) {
  // The oldest files first: nothing older outside the group can hold their
  // keys, so the merge may drop deletions, and its output, ranked as the
  // group's newest, stays older than every file left.
  std::sort(component->begin(), component->end(), [](const Run* a, const Run* b) { return a->rank < b->rank; });
  while (component->size() > kMaxMergeInputs) {
    const std::vector<const Run*> group(component->begin(), component->begin() + kMaxMergeInputs);
    std::vector<Run> out;
    if (absl::Status s = MergeInto(group, &out, tick); !s.ok()) return s;
    if (out.size() >= group.size()) break;  // no fewer files: merge them all at once
    std::vector<const Run*> rest(component->begin() + kMaxMergeInputs, component->end());
    component->clear();
    for (Run& r : out) {
      r.rank = group.back()->rank;
      reduced->push_back(std::move(r));
      component->push_back(&reduced->back());
    }
    component->insert(component->end(), rest.begin(), rest.end());
    RemoveFiles(group);
  }
  return absl::OkStatus();
}

absl::Status SortedRuns::Seal(const std::function<absl::Status()>& tick) {
  readers_.clear();
  if (absl::Status s = FlushSmall(); !s.ok()) return s;
  std::vector<Run> runs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    runs = std::move(runs_);
    runs_.clear();
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
    if (a.smallest != b.smallest) return a.smallest < b.smallest;
    return a.rank < b.rank;
  });
  // Components of overlapping files; a clean component is one big file
  // without deletions, adopted as it is. Neighbouring others are merged
  // together, so small files (a short track's tiles) join into few, at most
  // kMaxMergeInputs files at once (each merge input holds a file open).
  std::vector<Run> final_runs;
  std::deque<Run> reduced;  // outputs of partial merges (stable addresses)
  std::vector<const Run*> pending;
  bool pending_needs_merge = false;
  auto flush = [&]() -> absl::Status {
    if (pending.empty()) return absl::OkStatus();
    if (!pending_needs_merge && pending.size() == 1) {
      final_runs.push_back(*pending[0]);
    } else {
      if (absl::Status s = MergeInto(pending, &final_runs, tick); !s.ok()) return s;
      RemoveFiles(pending);
    }
    pending.clear();
    pending_needs_merge = false;
    return absl::OkStatus();
  };
  for (size_t i = 0; i < runs.size();) {
    size_t j = i + 1;
    std::string largest = runs[i].largest;
    bool deletions = runs[i].deletions;
    while (j < runs.size() && runs[j].smallest <= largest) {
      largest = std::max(largest, runs[j].largest);
      deletions |= runs[j].deletions;
      ++j;
    }
    const bool overlap = j - i > 1;
    if (!overlap && !deletions && runs[i].bytes >= small_file_bytes_) {
      if (absl::Status s = flush(); !s.ok()) return s;
      final_runs.push_back(runs[i]);
    } else {
      std::vector<const Run*> component;
      for (size_t k = i; k < j; ++k) component.push_back(&runs[k]);
      if (absl::Status s = Reduce(&component, &reduced, tick); !s.ok()) return s;
      if (pending.size() + component.size() > kMaxMergeInputs) {
        if (absl::Status s = flush(); !s.ok()) return s;
      }
      pending.insert(pending.end(), component.begin(), component.end());
      pending_needs_merge |= overlap || deletions;
    }
    i = j;
  }
  if (absl::Status s = flush(); !s.ok()) return s;
  std::sort(final_runs.begin(), final_runs.end(),
            [](const Run& a, const Run& b) { return a.smallest < b.smallest; });
  for (size_t i = 0; i + 1 < final_runs.size(); ++i) {
    if (final_runs[i].largest >= final_runs[i + 1].smallest) {
      return absl::InternalError(absl::StrCat("sealing ", dir_, ": files ", final_runs[i].path, " and ",
                                              final_runs[i + 1].path, " overlap"));
    }
  }
  const absl::flat_hash_set<std::string> synced = syncer_.Drain();
  for (size_t i = 0; i < final_runs.size(); ++i) {
    if (!synced.contains(final_runs[i].path)) {
      if (absl::Status s = SyncFile(final_runs[i].path); !s.ok()) return s;
    }
    const std::string name = (fs::path(dir_) / absl::StrFormat("%s%06d.ldb", kSortedFilePrefix, i + 1)).string();
    std::error_code ec;
    fs::rename(final_runs[i].path, name, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot rename ", final_runs[i].path, ": ", ec.message()));
  }
  return WriteFileList(dir_);
}

}  // namespace tracetable
