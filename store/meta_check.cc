#include "store/meta_check.h"

#include "absl/strings/str_cat.h"
#include "format/levels.h"
#include "store/corruption.h"

namespace tracetable {
namespace {

// Relative times are within INT64_MAX / 4 of the origin (format/time.cc) and
// an end adds a duration of at most as much: anything beyond half of the
// range is damage, and within it every difference of two times fits.
constexpr int64_t kMaxAbsTime = INT64_MAX / 2;

bool TimeOk(int64_t t) { return t >= -kMaxAbsTime && t <= kMaxAbsTime; }

}  // namespace

absl::Status CheckTableMeta(std::string_view path, const proto::TableMeta& m) {
  if (!TimeOk(m.min_ts()) || !TimeOk(m.max_end()) || m.max_end() < m.min_ts()) {
    return CorruptTable(path, absl::StrCat("impossible time span [", m.min_ts(), ", ", m.max_end(), "] ps"));
  }
  // More levels than the span needs: a shard built on its run's grid.
  if (m.num_levels() < static_cast<uint32_t>(NumLevelsForSpan(m.max_end() - m.min_ts())) ||
      m.num_levels() > static_cast<uint32_t>(kMaxLevels)) {
    return CorruptTable(path, absl::StrCat(m.num_levels(), " levels for a span of ",
                                           m.max_end() - m.min_ts(), " ps"));
  }
  // The string table always holds "" (id 0), in ceil(n / chunk) records.
  const uint64_t chunks = (m.num_strings() + kStringsPerChunk - 1) / kStringsPerChunk;
  if (m.num_strings() == 0 || m.num_string_chunks() != chunks) {
    return CorruptTable(path, absl::StrCat(m.num_strings(), " strings in ", m.num_string_chunks(),
                                           " chunks"));
  }
  return absl::OkStatus();
}

absl::Status CheckResources(std::string_view path, const proto::TableMeta& m,
                            const proto::ResourceTable& r) {
  for (int i = 0; i < r.processes_size(); ++i) {
    const proto::Process& p = r.processes(i);
    if (p.id() != static_cast<uint32_t>(i) ||
        (m.inputs_size() > 0 && p.input() >= static_cast<uint32_t>(m.inputs_size()))) {
      return CorruptTable(path, absl::StrCat("process ", i, " has id ", p.id(), " and input ", p.input()));
    }
  }
  uint64_t events = 0;
  for (int i = 0; i < r.tracks_size(); ++i) {
    const proto::Track& t = r.tracks(i);
    if (t.id() != static_cast<uint32_t>(i) || t.process() >= static_cast<uint32_t>(r.processes_size())) {
      return CorruptTable(path, absl::StrCat("track ", i, " has id ", t.id(), " and process ", t.process()));
    }
    if (t.classes_size() > static_cast<int>(m.num_levels()) || t.max_depth() > m.max_depth()) {
      return CorruptTable(path, absl::StrCat("track ", i, " has ", t.classes_size(),
                                             " storage levels and depth ", t.max_depth()));
    }
    uint64_t in_classes = 0;
    for (const proto::ClassExtent& c : t.classes()) {
      if (c.count() == 0) continue;
      if (c.min_ts() < m.min_ts() || c.max_end() > m.max_end() || c.min_ts() > c.max_end() ||
          c.max_dur() < 0 || c.max_dur() > m.max_end() - m.min_ts()) {
        return CorruptTable(path, absl::StrCat("track ", i, " has events outside the table's span"));
      }
      in_classes += c.count();
    }
    if (in_classes > t.num_events() || t.num_events() > m.num_events() - std::min(events, m.num_events())) {
      return CorruptTable(path, absl::StrCat("track ", i, " claims ", t.num_events(), " events"));
    }
    events += t.num_events();
  }
  return absl::OkStatus();
}

}  // namespace tracetable
