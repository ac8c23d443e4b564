// tracetable serve: an HTTP server answering window, event, search and stats
// queries over one or more opened tables, plus the built-in timeline viewer
// (query/viewer/, embedded at build time) at "/". docs/api.md describes every
// call.
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
#include "store/table.h"

namespace tracetable::serve {

struct ServeOptions {
  size_t cache_bytes = 256ull << 20;  // LevelDB block cache, per table
  int threads = 0;                    // worker threads; 0 = max(4, cores)
};

struct NamedTable {
  std::string name;
  std::unique_ptr<Table> table;
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
  // Serves until Stop(); call after Bind().
  void Run();
  // Thread-safe; makes Run() return.
  void Stop();

  const std::vector<NamedTable>& tables() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_SERVER_H_
