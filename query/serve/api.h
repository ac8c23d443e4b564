// The JSON API of `tracetable serve`, independent of the HTTP library: each
// call takes the query parameters and returns a status, a body and a content
// type. docs/api.md documents the calls, their parameters and answers.
#ifndef TRACETABLE_QUERY_SERVE_API_H_
#define TRACETABLE_QUERY_SERVE_API_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "query/serve/server.h"
#include "store/table.h"

namespace tracetable::serve {

// Query parameters (a key may repeat), as httplib::Params.
using Params = std::multimap<std::string, std::string>;

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  // Extra response headers. A reply carrying "ETag" is immutable: the front
  // answers 304 when the request's If-None-Match equals it, and caches it
  // ("Cache-Control: public, max-age=31536000, immutable") instead of no-store.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Answer caps (requests asking for more get the cap and "truncated").
inline constexpr uint64_t kMaxWindowItems = 500'000;
inline constexpr uint64_t kMaxBins = 2'000'000;         // (end - start) / resolution
inline constexpr uint64_t kMaxFullDetailEvents = 4'000'000;  // resolution 0 estimate
inline constexpr uint64_t kStatsEventCap = 2'000'000;
inline constexpr uint64_t kMaxSearchLimit = 1000;
inline constexpr std::chrono::milliseconds kSearchCountBudget{2000};  // search count=1

Reply ErrorReply(int status, std::string_view message, std::string_view parameter = {});

Reply TablesReply(const std::vector<NamedTable>& tables);
Reply TableReply(const NamedTable& table);
Reply WindowReply(const Table& table, const Params& params);
Reply EventReply(const Table& table, const Params& params);
Reply SearchReply(const Table& table, const Params& params);
Reply StatsReply(const Table& table, const Params& params);
// GET /data/plugin/profile/data (XProf / TensorBoard profile plugin).
Reply XprofReply(const std::vector<NamedTable>& tables, const Params& params);

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_API_H_
