#include "store/memory_profile_builder.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/container/btree_map.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/keys.h"
#include "format/memory_segment_codec.h"
#include "store/record_file.h"
#include "simdjson.h"

namespace tracetable {

namespace {

// Segments end once they hold this many events and at least as many as the
// allocations they carry in: the live set at any event is then one read of
// O(live + kMinSegmentEvents) rows, and carried copies cost at most as much
// as the events themselves.
constexpr uint64_t kMinSegmentEvents = 4096;

bool MemoryLess(const MemoryRecord& a, const MemoryRecord& b) {
  if (a.memory_id != b.memory_id) return a.memory_id < b.memory_id;
  if (a.ts != b.ts) return a.ts < b.ts;
  return a.event_id < b.event_id;
}

// An integer member (int, uint or a whole double), if present.
std::optional<int64_t> Int(simdjson::dom::element v) {
  int64_t i;
  if (v.get_int64().get(i) == simdjson::SUCCESS) return i;
  uint64_t u;
  if (v.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<int64_t>(u);
  double d;
  if (v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && d == std::floor(d) &&
      std::fabs(d) < 9.2e18) {
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::optional<uint64_t> Addr(simdjson::dom::element v) {
  uint64_t u;
  if (v.get_uint64().get(u) == simdjson::SUCCESS) return u;
  int64_t i;
  if (v.get_int64().get(i) == simdjson::SUCCESS) return static_cast<uint64_t>(i);
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) {  // "0x7f..." as some writers give it
    uint64_t x = 0;
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
      s.remove_prefix(2);
      base = 16;
    }
    if (s.empty()) return std::nullopt;
    for (char c : s) {
      int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' && base == 16 ? (c | 0x20) - 'a' + 10 : -1;
      if (d < 0) return std::nullopt;
      x = x * base + d;
    }
    return x;
  }
  return std::nullopt;
}

std::string Text(simdjson::dom::element v) {
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  return simdjson::to_string(v);
}

// PyTorch's c10::DeviceType numbers.
std::string KinetoDeviceName(int64_t type, int64_t id) {
  std::string base;
  switch (type) {
    case 0: base = "cpu"; break;
    case 1: base = "cuda"; break;
    case 6: base = "hip"; break;
    case 9: base = "xla"; break;
    case 12: base = "xpu"; break;
    case 13: base = "mps"; break;
    default: base = absl::StrCat("device type ", type); break;
  }
  return id < 0 ? base : absl::StrCat(base, ":", id);
}

}  // namespace

MemoryProfileBuilder::MemoryProfileBuilder(std::string spill_prefix, size_t max_records,
                                           size_t reserve_records, GrowFn grow)
    : spill_prefix_(std::move(spill_prefix)), max_records_(max_records),
      records_(std::make_unique<ExternalSorter<MemoryRecord>>(spill_prefix_, MemoryLess, max_records)),
      grow_(std::move(grow)) {
  records_->ReserveUpTo(reserve_records);
}

void MemoryProfileBuilder::NoteString(uint32_t id, std::string_view s) {
  if (s == "[memory]") kineto_name_ = id;
  if (s == "MemoryAllocation") alloc_name_ = id;
  if (s == "MemoryDeallocation") free_name_ = id;
}

uint32_t MemoryProfileBuilder::IdFor(uint32_t input, uint32_t process, std::string_view host,
                                     std::string name, std::string_view source) {
  std::string key = absl::StrCat(input, "\t", name);
  auto [it, inserted] = id_index_.try_emplace(key, ids_.ids_size());
  if (inserted) {
    proto::MemoryId* id = ids_.add_ids();
    id->set_name(std::move(name));
    id->set_host(std::string(host));
    id->set_input(input);
    id->set_process(process);
    id->set_source(std::string(source));
  }
  return it->second;
}

absl::Status MemoryProfileBuilder::Observe(const Event& e, uint64_t event_id, uint32_t process,
                                           uint32_t input, std::string_view host, EventSink* sink) {
  // One parser per builder thread; args objects are small.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::object args;
  if (e.args_json.empty() || parser.parse(e.args_json.data(), e.args_json.size()).get(args) !=
                                 simdjson::SUCCESS) {
    sink->CountSkipped("memory event without readable args (stored, not in the memory profile)");
    return absl::OkStatus();
  }
  auto get = [&](std::string_view key) -> std::optional<simdjson::dom::element> {
    simdjson::dom::element v;
    if (args.at_key(key).get(v) != simdjson::SUCCESS) return std::nullopt;
    return v;
  };
  auto get_int = [&](std::string_view key) -> int64_t {
    auto v = get(key);
    if (!v) return MemoryRecord::kNone;
    return Int(*v).value_or(MemoryRecord::kNone);
  };
  MemoryRecord r;
  r.ts = e.ts;
  r.event_id = event_id;
  if (e.name == kineto_name_) {
    const int64_t bytes = get_int("Bytes");
    if (bytes == MemoryRecord::kNone) {
      sink->CountSkipped("[memory] event without Bytes (stored, not in the memory profile)");
      return absl::OkStatus();
    }
    const int64_t type = get_int("Device Type");
    const int64_t device = get_int("Device Id");
    const bool totals = get("Total Allocated").has_value();
    r.memory_id = IdFor(input, process, host,
                        KinetoDeviceName(type == MemoryRecord::kNone ? -1 : type,
                                         device == MemoryRecord::kNone ? -1 : device),
                        totals ? "kineto" : "kineto running sum");
    r.op = bytes > 0 ? 1 : bytes < 0 ? 2 : 0;
    r.bytes = bytes < 0 ? -bytes : bytes;
    r.requested = r.bytes;
    r.in_use = get_int("Total Allocated");
    r.reserved = get_int("Total Reserved");
    if (r.in_use != MemoryRecord::kNone && r.reserved != MemoryRecord::kNone) {
      r.available = r.reserved - r.in_use;  // reserved by the caching allocator, not in use
    }
    if (auto a = get("Addr")) {
      if (auto v = Addr(*a)) {
        r.addr = *v;
        r.has_addr = 1;
      }
    }
  } else {
    auto name = get("allocator_name");
    r.memory_id = IdFor(input, process, host, name ? Text(*name) : std::string("allocator"), "xspace");
    r.op = e.name == alloc_name_ ? 1 : 2;
    r.bytes = get_int("allocation_bytes");
    r.requested = get_int("requested_bytes");
    // XProf's "in use" is heap allocated plus stack reserved bytes.
    const int64_t heap = get_int("bytes_allocated");
    const int64_t stack = get_int("bytes_reserved");
    if (heap != MemoryRecord::kNone) r.in_use = heap + (stack == MemoryRecord::kNone ? 0 : stack);
    r.reserved = stack;
    r.available = get_int("bytes_available");
    if (auto f = get("fragmentation")) {
      double d;
      if (f->get_double().get(d) == simdjson::SUCCESS) {
        r.fragmentation = d;
        r.has_fragmentation = true;
      }
    }
    r.step = get_int("step_id");
    if (auto a = get("addr")) {
      if (auto v = Addr(*a)) {
        r.addr = *v;
        r.has_addr = 1;
      }
    }
    auto intern = [&](std::string_view key) -> uint32_t {
      auto v = get(key);
      return v ? sink->Intern(Text(*v)) : 0;
    };
    r.tf_op = intern("tf_op");
    // TensorFlow's allocator writes the shape as "shape" (XProf reads it as
    // its tensor shape); "tensor_shape" is the name XProf's own schema uses.
    r.shape = get("tensor_shape") ? intern("tensor_shape") : intern("shape");
    r.data_type = intern("data_type");
    r.region = intern("region_type");
  }
  if (grow_ && records_->buffered() == records_->max_records()) {
    absl::StatusOr<size_t> more = grow_();
    if (!more.ok()) return more.status();
    if (*more > 0) {
      if (absl::Status s = records_->SetMaxRecords(records_->max_records() + *more); !s.ok()) return s;
    }
  }
  return records_->Add(r);
}

namespace {

struct Interval {
  uint64_t alloc_seq = 0;
  uint64_t free_seq = 0;  // + 1; 0 = never freed
  int64_t alloc_ts = 0;
  int64_t free_ts = 0;
  int64_t bytes = 0;
  int64_t requested = 0;
  int64_t step = 0;
  uint64_t addr = 0;
  uint64_t event_id = 0;
  uint32_t op = 0, shape = 0, data_type = 0, region = 0;
};

// The in-use curve at one event.
struct CurvePoint {
  int64_t ts = 0;
  int64_t in_use = 0;
};

// A paired free: the ID's allocation number `alloc` (in allocation order)
// ends at event free_seq - 1.
struct FreeRecord {
  uint64_t alloc = 0;
  uint64_t free_seq = 0;
  int64_t free_ts = 0;
};
struct FreeOrder {
  static uint64_t Key(const FreeRecord& r) { return r.alloc; }
  bool operator()(const FreeRecord& a, const FreeRecord& b) const { return a.alloc < b.alloc; }
};

void AppendInterval(const Interval& a, proto::MemorySegment* s) {
  s->add_alloc_seq(a.alloc_seq);
  s->add_alloc_ts(a.alloc_ts);
  s->add_free_seq(a.free_seq);
  s->add_free_ts(a.free_ts);
  s->add_bytes(a.bytes);
  s->add_requested(a.requested);
  s->add_addr(a.addr);
  s->add_op(a.op);
  s->add_shape(a.shape);
  s->add_data_type(a.data_type);
  s->add_region(a.region);
  s->add_event_id(a.event_id);
  s->add_step(a.step);
}

// Writes one memory ID's segments in order, given its allocations complete
// (each knowing its free) in allocation order. Holds one segment and the
// allocations still live at its end.
class SegmentWriter {
 public:
  SegmentWriter(uint32_t index, std::vector<uint64_t> firsts, uint64_t events,
                RecordFile<CurvePoint>* curve, const MemoryProfileBuilder::Output& out)
      : index_(index), firsts_(std::move(firsts)), events_(events), curve_(curve), out_(out) {
    if (!firsts_.empty()) Open();  // an ID has a segment once it has an event
  }

  absl::Status Add(const Interval& a) {
    while (a.alloc_seq >= End()) {
      if (absl::Status s = Close(); !s.ok()) return s;
    }
    AppendInterval(a, &segment_);
    if (a.free_seq == 0 || a.free_seq > End()) live_.emplace(a.alloc_seq, a);
    return absl::OkStatus();
  }

  absl::Status Finish() {
    while (s_ < firsts_.size()) {
      if (absl::Status s = Close(); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  uint64_t End() const { return s_ + 1 < firsts_.size() ? firsts_[s_ + 1] : events_; }

  // Starts segment s_ with the allocations live before its first event.
  void Open() {
    const uint64_t first = firsts_[s_];
    segment_.Clear();
    segment_.set_first_seq(first);
    for (auto it = live_.begin(); it != live_.end();) {
      if (it->second.free_seq != 0 && it->second.free_seq <= first) {
        it = live_.erase(it);
      } else {
        AppendInterval(it->second, &segment_);
        ++it;
      }
    }
    segment_.set_carried(static_cast<uint32_t>(live_.size()));
  }

  absl::Status Close() {
    int64_t prev = 0;
    for (uint64_t i = firsts_[s_], end = End(); i < end; ++i) {
      CurvePoint p;
      if (absl::Status s = curve_->Next(&p); !s.ok()) return s;
      segment_.add_ts_delta(p.ts - prev);
      prev = p.ts;
      segment_.add_in_use(p.in_use);
    }
    // Kineto has no steps: an all-empty column is left out (format.md).
    if (std::all_of(segment_.step().begin(), segment_.step().end(),
                    [](int64_t v) { return v == MemoryRecord::kNone; })) {
      segment_.clear_step();
    }
    EncodeSegmentColumns(&segment_);
    if (absl::Status s = out_.put(MemorySegmentKey(index_, static_cast<uint32_t>(s_)),
                                  segment_.SerializeAsString());
        !s.ok()) {
      return s;
    }
    if (++s_ < firsts_.size()) Open();
    return absl::OkStatus();
  }

  uint32_t index_;
  std::vector<uint64_t> firsts_;  // each segment's first event
  uint64_t events_;
  RecordFile<CurvePoint>* curve_;
  const MemoryProfileBuilder::Output& out_;
  size_t s_ = 0;
  proto::MemorySegment segment_;
  absl::btree_map<uint64_t, Interval> live_;  // by alloc_seq
};

// Derives one memory ID from its events in order. Segments need each
// allocation's free, which comes later: the curve and the allocations wait
// in files and the frees in a sorter until Finish joins them, so memory
// holds only the live allocations, not all of them (625k on one Kineto 10M
// device: 78 MB).
class IdDeriver {
 public:
  IdDeriver(uint32_t index, proto::MemoryId* id, EventSink* sink,
            const MemoryProfileBuilder::Output& out, const std::string& spill_prefix,
            size_t free_records)
      : index_(index), id_(id), sink_(sink), out_(out), curve_(spill_prefix + ".curve"),
        allocs_(spill_prefix + ".allocs"), frees_(spill_prefix + ".frees", FreeOrder{}, free_records) {}

  absl::Status Add(const MemoryRecord& r) {
    const uint64_t seq = id_->events();
    if (seq == 0) {
      id_->set_first_ts(r.ts);
      StartSegment(0, r.ts);
    } else if (seq - segment_start_ >= std::max<uint64_t>(kMinSegmentEvents, carried_at_start_)) {
      StartSegment(seq, r.ts);
    }
    id_->set_events(seq + 1);
    id_->set_last_ts(r.ts);
    int64_t size = r.bytes == MemoryRecord::kNone ? 0 : r.bytes;
    absl::Status st;
    if (r.op == 1) {
      st = Allocate(r, seq, size);
    } else if (r.op == 2) {
      id_->set_deallocations(id_->deallocations() + 1);
      auto it = r.has_addr ? open_.find(r.addr) : open_.end();
      if (!r.has_addr) id_->set_events_without_addr(id_->events_without_addr() + 1);
      if (it == open_.end()) {
        id_->set_frees_without_alloc(id_->frees_without_alloc() + 1);
      } else {
        const OpenAlloc a = it->second.back();
        st = frees_.Add(FreeRecord{a.alloc, seq + 1, r.ts});
        if (r.bytes == MemoryRecord::kNone) size = a.bytes;
        it->second.pop_back();
        if (it->second.empty()) open_.erase(it);
        --live_;
      }
    }
    if (!st.ok()) return st;
    if (r.in_use != MemoryRecord::kNone) {
      running_ = r.in_use;
    } else {
      running_ += r.op == 1 ? size : r.op == 2 ? -size : 0;
    }
    if (absl::Status s = curve_.Append(CurvePoint{r.ts, running_}); !s.ok()) return s;
    if (seq == 0 || running_ > id_->peak_in_use()) {
      id_->set_peak_in_use(running_);
      id_->set_peak_ts(r.ts);
      id_->set_peak_seq(seq);
      id_->set_has_peak_step(r.step != MemoryRecord::kNone);
      id_->set_peak_step(r.step == MemoryRecord::kNone ? 0 : r.step);
    }
    if (r.reserved != MemoryRecord::kNone && (!have_reserved_ || r.reserved > id_->peak_reserved())) {
      have_reserved_ = true;
      id_->set_peak_reserved(r.reserved);
      id_->set_peak_reserved_ts(r.ts);
    }
    return Samples(r);
  }

  // Joins each allocation with its free (frees merged in allocation order)
  // and writes the segments.
  absl::Status Finish(size_t read_budget) {
    id_->set_allocs_never_freed(live_);
    if (absl::Status s = curve_.StartReading(); !s.ok()) return s;
    if (absl::Status s = allocs_.StartReading(); !s.ok()) return s;
    SegmentWriter writer(index_, std::move(segment_firsts_), id_->events(), &curve_, out_);
    uint64_t next = 0;  // allocations read
    auto take = [&](uint64_t upto) -> absl::Status {
      for (; next < upto; ++next) {
        Interval a;
        if (absl::Status s = allocs_.Next(&a); !s.ok()) return s;
        if (absl::Status s = writer.Add(a); !s.ok()) return s;
      }
      return absl::OkStatus();
    };
    absl::Status st = frees_.Merge(read_budget, [&](const FreeRecord& f) -> absl::Status {
      if (absl::Status s = take(f.alloc); !s.ok()) return s;
      Interval a;
      if (absl::Status s = allocs_.Next(&a); !s.ok()) return s;
      ++next;
      a.free_seq = f.free_seq;
      a.free_ts = f.free_ts;
      return writer.Add(a);
    });
    if (st.ok()) st = take(allocs_.size());
    if (st.ok()) st = writer.Finish();
    return st;
  }

 private:
  struct OpenAlloc {
    uint64_t alloc;  // allocation number
    int64_t bytes;
  };

  absl::Status Allocate(const MemoryRecord& r, uint64_t seq, int64_t size) {
    id_->set_allocations(id_->allocations() + 1);
    Interval a;
    a.alloc_seq = seq;
    a.alloc_ts = r.ts;
    a.bytes = size;
    a.requested = r.requested == MemoryRecord::kNone ? size : r.requested;
    a.step = r.step;
    a.addr = r.addr;
    a.event_id = r.event_id;
    a.op = r.tf_op;
    a.shape = r.shape;
    a.data_type = r.data_type;
    a.region = r.region;
    const uint64_t k = allocs_.size();
    if (absl::Status s = allocs_.Append(a); !s.ok()) return s;
    ++live_;
    if (r.has_addr) {
      std::vector<OpenAlloc>& at = open_[r.addr];
      if (!at.empty()) id_->set_allocs_at_live_addr(id_->allocs_at_live_addr() + 1);
      at.push_back(OpenAlloc{k, size});
    } else {
      // Without an address it can never be freed.
      id_->set_events_without_addr(id_->events_without_addr() + 1);
    }
    return absl::OkStatus();
  }

  void StartSegment(uint64_t seq, int64_t ts) {
    segment_start_ = seq;
    segment_firsts_.push_back(seq);
    id_->add_segment_seq(seq);
    id_->add_segment_ts(ts);
    carried_at_start_ = live_;
  }

  uint32_t Track(uint32_t* field, std::string_view series) {
    if (*field == 0) {
      *field = out_.new_counter_track(id_->process(), absl::StrCat("Memory ", id_->name()), series) + 1;
    }
    return *field - 1;
  }

  // `name`: the series' interned name once known (0 before: "" is never a
  // series), so a sample costs no string lookup.
  absl::Status Sample(uint32_t* field, uint32_t* name, std::string_view series, int64_t ts, double value) {
    const uint32_t track = Track(field, series);
    if (*name == 0) *name = sink_->Intern(series);
    return out_.add_counter(track, *name, ts, value);
  }

  // In use gets a sample per event (its curve is the profile); the other
  // series only when their value changes: a counter holds its value until
  // the next sample, so nothing is lost, and reserved bytes rarely change.
  absl::Status Samples(const MemoryRecord& r) {
    uint32_t t = id_->in_use_track();
    absl::Status s = Sample(&t, &in_use_name_, "in use bytes", r.ts, static_cast<double>(running_));
    id_->set_in_use_track(t);
    auto changed = [](std::optional<double>* last, double v) {
      if (*last == v) return false;
      *last = v;
      return true;
    };
    if (s.ok() && r.reserved != MemoryRecord::kNone && changed(&last_reserved_, static_cast<double>(r.reserved))) {
      t = id_->reserved_track();
      s = Sample(&t, &reserved_name_, "reserved bytes", r.ts, static_cast<double>(r.reserved));
      id_->set_reserved_track(t);
    }
    if (s.ok() && r.available != MemoryRecord::kNone &&
        changed(&last_available_, static_cast<double>(r.available))) {
      t = id_->available_track();
      s = Sample(&t, &available_name_, "available bytes", r.ts, static_cast<double>(r.available));
      id_->set_available_track(t);
    }
    if (s.ok() && r.has_fragmentation && changed(&last_fragmentation_, r.fragmentation)) {
      t = id_->fragmentation_track();
      s = Sample(&t, &fragmentation_name_, "fragmentation", r.ts, r.fragmentation);
      id_->set_fragmentation_track(t);
    }
    return s;
  }

  uint32_t index_;
  proto::MemoryId* id_;
  EventSink* sink_;
  const MemoryProfileBuilder::Output& out_;
  int64_t running_ = 0;
  bool have_reserved_ = false;
  std::optional<double> last_reserved_, last_available_, last_fragmentation_;
  uint32_t in_use_name_ = 0, reserved_name_ = 0, available_name_ = 0, fragmentation_name_ = 0;
  RecordFile<CurvePoint> curve_;  // one point per event
  RecordFile<Interval> allocs_;   // frees not yet known
  ExternalSorter<FreeRecord, FreeOrder> frees_;
  absl::flat_hash_map<uint64_t, std::vector<OpenAlloc>> open_;  // addr -> live allocs, latest last
  uint64_t live_ = 0;  // allocations not freed (also those without address)
  std::vector<uint64_t> segment_firsts_;
  uint64_t segment_start_ = 0;
  uint64_t carried_at_start_ = 0;
};

}  // namespace

absl::Status MemoryProfileBuilder::Finish(size_t read_budget, EventSink* sink, const Output& out,
                                          proto::MemoryProfile* profile) {
  *profile = ids_;
  if (records_->size() == 0) return absl::OkStatus();
  // The frees' sorter holds as many bytes as the records' did.
  const size_t free_records = max_records_ * sizeof(MemoryRecord) / sizeof(FreeRecord);
  std::unique_ptr<IdDeriver> current;
  uint32_t current_id = 0;
  // Half the read buffers for the records, half for one ID's frees.
  absl::Status st = records_->Merge(read_budget / 2, [&](const MemoryRecord& r) -> absl::Status {
    if (!current || r.memory_id != current_id) {
      if (current) {
        if (absl::Status s = current->Finish(read_budget / 2); !s.ok()) return s;
      }
      current.reset();  // its files go before the next ID's take the names
      current_id = r.memory_id;
      current = std::make_unique<IdDeriver>(current_id, profile->mutable_ids(current_id), sink, out,
                                            spill_prefix_, free_records);
    }
    return current->Add(r);
  });
  if (!st.ok()) return st;
  if (current) st = current->Finish(read_budget / 2);
  records_.reset();
  return st;
}

std::string MemoryProfileBuilder::UnpairedSummary(const proto::MemoryProfile& profile) {
  std::string out;
  for (const proto::MemoryId& id : profile.ids()) {
    absl::StrAppend(&out, "memory ", id.host().empty() ? "" : absl::StrCat(id.host(), " "), id.name(),
                    ": ", id.allocations(), " allocations, ", id.deallocations(), " deallocations; unpaired: ",
                    id.frees_without_alloc(), " frees without allocation, ", id.allocs_never_freed(),
                    " allocations never freed, ", id.allocs_at_live_addr(),
                    " allocations at a live address, ", id.events_without_addr(), " without address\n");
  }
  return out;
}

}  // namespace tracetable
