// The JSON API of `tracetable serve`, independent of the HTTP library: each
// call takes the query parameters and returns a status, a body and a content
// type. docs/api.md documents the calls, their parameters and answers.
#ifndef TRACETABLE_QUERY_SERVE_API_H_
#define TRACETABLE_QUERY_SERVE_API_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "query/serve/server.h"
#include "store/table.h"

namespace tracetable::serve {

// Query parameters (a key may repeat), percent-decoded.
using Params = std::multimap<std::string, std::string>;

// A large answer produced in pieces, so it never exists whole. Next() is
// called on one thread at a time; held_bytes() from any thread.
class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // Appends the next piece (about kChunkItems items) to *out; false after
  // the last one.
  virtual bool Next(std::string* out) = 0;
  // Memory the source still holds (counted against the answer budget); it
  // shrinks as pieces go out.
  virtual uint64_t held_bytes() const = 0;
};

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  // Extra response headers. A reply carrying "ETag" is immutable: the front
  // answers 304 when the request's If-None-Match equals it, and caches it
  // ("Cache-Control: public, max-age=31536000, immutable") instead of no-store.
  std::vector<std::pair<std::string, std::string>> headers;
  // Set for a large answer produced in pieces (then `body` is empty); the
  // front sends the pieces as they come (chunked transfer encoding) and drops
  // the source when the client goes away.
  std::shared_ptr<ChunkSource> chunks;
};

// Calls r->chunks to the end, into r->body (then clears chunks).
void Drain(Reply* r);

// Answer caps (requests asking for more get the cap and "truncated").
inline constexpr uint64_t kMaxWindowItems = 500'000;
inline constexpr uint64_t kMaxBins = 2'000'000;         // (end - start) / resolution
inline constexpr uint64_t kMaxFullDetailEvents = 4'000'000;  // resolution 0 estimate
inline constexpr uint64_t kStatsEventCap = 2'000'000;
inline constexpr uint64_t kMaxSearchLimit = 1000;
inline constexpr std::chrono::milliseconds kSearchCountBudget{2000};  // search count=1
// Windows with at least this many items are streamed (when asked to be).
inline constexpr size_t kStreamItems = 4096;
inline constexpr size_t kChunkItems = 2048;  // ~350 KB of JSON a piece
// A window counts as heavy (IsHeavyCall) above this many bins, or when it
// covers more than kHeavyEvents events.
inline constexpr uint64_t kHeavyBins = 20'000;
inline constexpr double kHeavyEvents = 250'000;

Reply ErrorReply(int status, std::string_view message, std::string_view parameter = {});

Reply TablesReply(const std::vector<NamedTable>& tables);
Reply TableReply(const NamedTable& table);
Reply WindowReply(const Table& table, const Params& params);
// stream = true: an answer of kStreamItems items or more comes as chunks.
Reply WindowReply(const Table& table, const Params& params, bool stream);
Reply EventReply(const Table& table, const Params& params);
Reply SearchReply(const Table& table, const Params& params);
Reply StatsReply(const Table& table, const Params& params);
// GET /data/plugin/profile/data (XProf / TensorBoard profile plugin).
Reply XprofReply(const std::vector<NamedTable>& tables, const Params& params);

// Whether `call` ("window", "stats", "xprof", ...) may read many events
// (stats; resolution 0; more than kHeavyBins bins or kHeavyEvents events
// under the window; xprof at resolution 0 or without a time): the front runs those on a
// small pool of their own so they never starve cheap calls. `table` may be
// null (xprof, which names its table in the parameters).
bool IsHeavyCall(const Table* table, std::string_view call, const Params& params);
// About how many items a window call answers with: the events under it,
// capped by its limit and, above resolution 0, by about two per bin, track
// and lane; from the table's per-track counts (query/estimate.h), never
// reading tiles. 0 when its parameters are bad (it is answered with a 400).
double WindowItemsEstimate(const Table& table, const Params& params);
// Memory a call's work may take before its answer exists (stats' events, a
// window's items), reserved from the answer budget before it runs, so the
// work waits for room instead of allocating past the budget; 0 when the
// answer's own size is all that counts.
uint64_t WorkingBytesEstimate(const Table& table, std::string_view call, const Params& params);

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_API_H_
