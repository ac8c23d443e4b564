#include "query/track_filter.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tracetable {
namespace {

absl::Status NoMatch(std::string* bad_parameter, const char* kind, std::string message) {
  if (bad_parameter) *bad_parameter = kind;
  return absl::NotFoundError(std::move(message));
}

bool PidMatches(const std::string& filter, const proto::Process& p, const proto::Track& t) {
  const size_t colon = filter.find(':');
  const std::string pid = filter.substr(0, colon);
  if (pid != p.pid() && pid != absl::StrCat(p.out_pid())) return false;
  if (colon == std::string::npos) return true;
  const std::string tid = filter.substr(colon + 1);
  return tid == t.tid() || tid == absl::StrCat(t.out_tid());
}

}  // namespace

absl::StatusOr<std::vector<uint32_t>> SelectTracks(const Table& table, const TrackFilter& filter,
                                                   std::string* bad_parameter) {
  const proto::ResourceTable& res = table.resources();
  std::vector<uint32_t> out;
  std::vector<bool> chosen(res.tracks_size(), filter.ids.empty());
  for (const std::string& s : filter.ids) {
    uint32_t id = 0;
    if (!absl::SimpleAtoi(s, &id) || id >= static_cast<uint32_t>(res.tracks_size())) {
      return NoMatch(bad_parameter, "tracks",
                     absl::StrCat("no track '", s.substr(0, 32), "' (ids are 0..",
                                  res.tracks_size() - 1, ")"));
    }
    chosen[id] = true;
  }
  std::vector<bool> pid_hit(filter.pids.size()), host_hit(filter.hosts.size());
  for (const proto::Track& t : res.tracks()) {
    if (!chosen[t.id()]) continue;
    const proto::Process& p = res.processes(t.process());
    bool host_ok = filter.hosts.empty();
    for (size_t i = 0; i < filter.hosts.size(); ++i) {
      if (p.host() == filter.hosts[i]) host_ok = host_hit[i] = true;
    }
    if (!host_ok) continue;
    bool pid_ok = filter.pids.empty();
    for (size_t i = 0; i < filter.pids.size(); ++i) {
      if (PidMatches(filter.pids[i], p, t)) pid_ok = pid_hit[i] = true;
    }
    if (pid_ok) out.push_back(t.id());
  }
  for (size_t i = 0; i < filter.pids.size(); ++i) {
    if (!pid_hit[i]) {
      return NoMatch(bad_parameter, "pid",
                     absl::StrCat("no such process/thread ", filter.pids[i].substr(0, 64), " in the table"));
    }
  }
  for (size_t i = 0; i < filter.hosts.size(); ++i) {
    if (!host_hit[i]) {
      return NoMatch(bad_parameter, "host",
                     absl::StrCat("no such host '", filter.hosts[i].substr(0, 64), "' in the table"));
    }
  }
  return out;
}

}  // namespace tracetable
