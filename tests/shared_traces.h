// The real trace files of other projects' test suites under
// TRACETABLE_SHARED_TRACES (../shared/traces; provenance in its README):
// every *.json* and *.xplane.pb one level down, sorted. Empty when the folder
// is missing (the tests that use it then say so).
#ifndef TRACETABLE_TESTS_SHARED_TRACES_H_
#define TRACETABLE_TESTS_SHARED_TRACES_H_

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace tracetable::testing {

inline std::vector<std::string> SharedTraces() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(TRACETABLE_SHARED_TRACES, ec)) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      const std::string name = f.path().filename().string();
      if (name.find(".json") != std::string::npos || name.find(".xplane.pb") != std::string::npos) {
        out.push_back(f.path().string());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tracetable::testing

#endif  // TRACETABLE_TESTS_SHARED_TRACES_H_
