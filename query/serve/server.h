// tracetable serve: an HTTP server answering window, event, search and stats
// queries over one or more opened tables, plus the built-in timeline viewer
// (query/viewer/, embedded at build time) at "/". docs/api.md describes every
// call.
//
// The front is event-driven (Boost.Beast/Asio): io threads accept, read and
// write every connection, so idle and slow clients cost a socket and a few
// KB, never a thread. A request goes to a worker only once read whole (its
// head and body within request_timeout_s); heavy calls (api.h IsHeavyCall)
// have a small pool of their own. In each pool the cheapest call runs first,
// then the connection that asked for least lately (work_pool.h,
// fair_clock.h); heavy windows' answers are kept and sent again
// (answer_cache.h). Answers hold memory from a global budget
// (max_answer_bytes) and large ones are streamed in chunks. Requests must
// name an allowed Host (unless bound to a non-loopback address) and carry
// the token when one is set.
//
// Tables are opened once and shared by the worker threads (Table's const
// methods are thread-safe). Requests never name files: a table is chosen by
// its name (the directory name without ".tracetable") from the set given at
// start.
#ifndef TRACETABLE_QUERY_SERVE_SERVER_H_
#define TRACETABLE_QUERY_SERVE_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "query/serve/work_pool.h"
#include "store/table.h"

namespace tracetable::serve {

struct ServeOptions {
  size_t cache_bytes = 256ull << 20;  // LevelDB block cache, per table (a run's shards share one)
  size_t max_open_shards = 64;        // per run: shards open at once (LRU), bounding fds and memory
  int threads = 0;                    // workers for light calls; 0 = max(2, cores)
  int heavy_threads = 2;              // workers for heavy calls
  int io_threads = 2;                 // threads accepting, reading and writing
  size_t max_queued = 1024;           // requests waiting per pool; more get 503
  int max_connections = 10000;        // open at once; more are refused
  int max_connections_per_address = 2000;
  double request_timeout_s = 10;      // a whole request head + body
  double idle_timeout_s = 15;         // a keep-alive connection waiting for a request
  double write_timeout_s = 30;        // a client not taking any of a piece of the answer
  uint64_t max_answer_bytes = 256ull << 20;  // answer memory in flight, all requests
  double budget_wait_s = 5;           // an answer waits this long for room, then 503
  std::vector<std::string> allow_hosts;      // Host names accepted besides localhost
  std::string token;                         // required from every request when set
};

struct NamedTable {
  std::string name;
  // Shared: a run reopened after its manifest changed replaces it for new
  // requests while requests in flight finish on this one.
  std::shared_ptr<Table> table;
};

// Each path is a table directory, or a folder whose *.tracetable children are
// tables. Names are made unique ("a", "a-2", ...).
absl::StatusOr<std::vector<NamedTable>> OpenTables(const std::vector<std::string>& paths,
                                                   const ServeOptions& options);

class Server {
 public:
  Server(std::vector<NamedTable> tables, const ServeOptions& options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0 = an ephemeral port) and returns the bound port.
  absl::StatusOr<int> Bind(const std::string& host, int port);
  // After Bind(): whether the Host header is checked (false when bound to an
  // address other than loopback, which exposes the tables on purpose).
  bool checks_host() const;
  // Serves until Stop(); call after Bind().
  void Run();
  // Thread-safe; makes Run() return.
  void Stop();

  // The tables now served. A changed run is reopened on the next request
  // for it and the list replaced; the list returned stays valid (and its
  // tables open) for as long as the caller holds it.
  std::shared_ptr<const std::vector<NamedTable>> tables() const;

  // Calls waiting for and run by the light and heavy pools, a snapshot: for
  // monitoring, and for tests that must know what is queued.
  struct Load {
    PoolLoad light, heavy;
  };
  Load load() const;

 private:
  friend class Session;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_SERVER_H_
