// Real traces of other projects (../shared/traces) grouped as the hosts of a
// run, for tests that compare a run with one table of the same inputs: each
// group mixes what a pod's hosts could hold (Kineto ranks, catapult's
// corner cases, an XSpace beside a Kineto trace).
#ifndef TRACETABLE_TESTS_RUNS_REAL_TRACE_HOSTS_H_
#define TRACETABLE_TESTS_RUNS_REAL_TRACE_HOSTS_H_

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tracetable {

inline const std::vector<std::vector<std::string>>& RealTraceHostGroups() {
  static const auto* groups = new std::vector<std::vector<std::string>>{
      {"kineto/sampled_rank-0.json.gz", "kineto/sampled_rank-1.json.gz"},
      {"catapult/async_begin_end.json", "catapult/flow_simple.json", "catapult/instant_events.json",
       "catapult/nestable_async.json", "catapult/simple_trace.json", "catapult/instance_counters.json"},
      {"xspace/gpu_multi_worker_host179.xplane.pb", "kineto/sampled_rank-0.json.gz"},
  };
  return *groups;
}

// Copies a group's traces into `into` as "h<i>-<stem><ext>" (one host each:
// the same trace twice in a group must not share a name) and returns the
// copies' names.
inline std::vector<std::string> CopyHostGroup(const std::filesystem::path& shared,
                                              const std::vector<std::string>& group,
                                              const std::filesystem::path& into) {
  std::vector<std::string> files;
  for (size_t i = 0; i < group.size(); ++i) {
    const std::string name = std::filesystem::path(group[i]).filename().string();
    const std::string f = absl::StrCat("h", i, "-", name.substr(0, name.find('.')), name.substr(name.find('.')));
    std::filesystem::copy_file(shared / group[i], into / f);
    files.push_back(f);
  }
  return files;
}

}  // namespace tracetable

#endif  // TRACETABLE_TESTS_RUNS_REAL_TRACE_HOSTS_H_
