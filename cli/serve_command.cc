// tracetable serve PATH... [--port 8080] [--bind 127.0.0.1] [--cache-mb 256]
//                          [--threads N]
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/common.h"
#include "query/serve/server.h"

namespace tracetable::cli {
namespace po = boost::program_options;

int ServeMain(int argc, char** argv) {
  po::options_description opts(
      "usage: tracetable serve PATH... [options]\n\n"
      "Serves tables over HTTP: a JSON API (docs/api.md) and a zoomable timeline viewer at /.\n"
      "PATH is a .tracetable directory or a folder holding *.tracetable directories.\n"
      "Listens on the loopback interface unless --bind says otherwise. Ctrl-C stops.\n\noptions");
  KeepFreedMemoryForReuse();
  std::vector<std::string> paths;
  std::string bind = "127.0.0.1";
  int port = 8080, threads = 0;
  uint64_t cache_mb = 256;
  opts.add_options()
      ("help,h", "show this help")
      ("port", po::value(&port)->default_value(8080), "TCP port (0 = any free port)")
      ("bind", po::value(&bind)->default_value("127.0.0.1"),
       "address to listen on (0.0.0.0 exposes the tables to the network)")
      ("cache-mb", po::value(&cache_mb)->default_value(256), "block cache per table, MiB")
      ("threads", po::value(&threads)->default_value(0), "worker threads (0 = max(16, 2 x cores))");
  po::options_description all;
  all.add(opts).add_options()("path", po::value(&paths));
  po::positional_options_description pos;
  pos.add("path", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Fail("serve", absl::StrCat(e.what(), " (see --help)"));
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  if (paths.empty()) return Fail("serve", "no table given (see --help)");
  if (port < 0 || port > 65535) return Fail("serve", "--port must be 0..65535");
  if (cache_mb > (1u << 20)) return Fail("serve", "--cache-mb is too large");

  // Ctrl-C / SIGTERM: block them in every thread and wait for them in one,
  // which stops the server; Run() then returns and tables close normally.
  // A shell starts background jobs with SIGINT ignored; an ignored signal is
  // never pending, so restore the default before waiting for it.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  serve::ServeOptions so;
  so.cache_bytes = cache_mb << 20;
  so.threads = threads;
  absl::StatusOr<std::vector<serve::NamedTable>> tables = serve::OpenTables(paths, so);
  if (!tables.ok()) return Fail("serve", tables.status().message());
  serve::Server server(std::move(*tables), so);
  absl::StatusOr<int> bound = server.Bind(bind, port);
  if (!bound.ok()) return Fail("serve", bound.status().message());
  const std::string host = bind.find(':') != std::string::npos ? absl::StrCat("[", bind, "]") : bind;
  for (const serve::NamedTable& t : server.tables()) {
    std::printf("table %s: %s\n", t.name.c_str(), t.table->path().c_str());
  }
  std::printf("serving %zu table(s) at http://%s:%d/  (Ctrl-C stops)\n", server.tables().size(),
              host == "0.0.0.0" ? "127.0.0.1" : host.c_str(), *bound);
  std::fflush(stdout);
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig != 0) std::fprintf(stderr, "tracetable serve: stopping\n");
    server.Stop();
  });
  server.Run();
  // Run() returned: wake the waiter if it is still waiting.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return 0;
}

}  // namespace tracetable::cli
