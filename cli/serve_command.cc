// tracetable serve PATH... [--port 8080] [--bind 127.0.0.1] [--cache-mb 256]
//                          [--threads N] [limits, access: see --help]
#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
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
      "PATH is a .tracetable directory (a table or a run of shards) or a folder holding *.tracetable directories.\n"
      "Listens on the loopback interface unless --bind says otherwise. Ctrl-C stops.\n\noptions");
  // A server runs for weeks: large answers' memory goes back to the system
  // when they are done (mmap'd from 1 MB up, not kept in malloc's arenas),
  // so RSS follows the answer budget instead of its high-water mark.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
  mallopt(M_ARENA_MAX, 4);
  std::vector<std::string> paths;
  std::string bind = "127.0.0.1", token, token_file;
  int port = 8080, threads = 0;
  uint64_t cache_mb = 256;
  serve::ServeOptions so;
  uint64_t answer_mb = so.max_answer_bytes >> 20;
  opts.add_options()
      ("help,h", "show this help")
      ("port", po::value(&port)->default_value(8080), "TCP port (0 = any free port)")
      ("bind", po::value(&bind)->default_value("127.0.0.1"),
       "address to listen on; a non-loopback one (0.0.0.0) exposes the tables to the network and "
       "turns the Host check off")
      ("allow-host", po::value(&so.allow_hosts)->composing(),
       "a Host name accepted besides localhost, 127.0.0.1, [::1] and the bound address "
       "(repeatable); other Hosts get 403")
      ("token", po::value(&token), "require this token: 'Authorization: Bearer TOKEN', or "
       "?token=TOKEN on the viewer's first load (a cookie then carries it)")
      ("token-file", po::value(&token_file), "read the token from this file (first line)")
      ("cache-mb", po::value(&cache_mb)->default_value(256), "block cache per table (a run's shards share one), MiB")
      ("max-open-shards", po::value(&so.max_open_shards)->default_value(so.max_open_shards),
       "per run: shards kept open at once (least recently used closed first)")
      ("threads", po::value(&threads)->default_value(0), "workers for light calls (0 = max(2, cores))")
      ("heavy-threads", po::value(&so.heavy_threads)->default_value(so.heavy_threads),
       "workers for heavy calls (stats, resolution 0, windows of over 20000 bins or 250000 events)")
      ("io-threads", po::value(&so.io_threads)->default_value(so.io_threads),
       "threads accepting, reading and writing connections")
      ("max-answer-mb", po::value(&answer_mb)->default_value(answer_mb),
       "memory for answers in flight, all requests together, MiB; over it: 503 (or 413 for an "
       "answer that could never fit)")
      ("budget-wait", po::value(&so.budget_wait_s)->default_value(so.budget_wait_s),
       "seconds an answer waits for room in --max-answer-mb before its 503")
      ("max-connections", po::value(&so.max_connections)->default_value(so.max_connections),
       "open connections at most; more are refused")
      ("max-connections-per-address", po::value(&so.max_connections_per_address)
                                          ->default_value(so.max_connections_per_address),
       "open connections at most from one client address")
      ("request-timeout", po::value(&so.request_timeout_s)->default_value(so.request_timeout_s),
       "seconds a client has to send a whole request (head and body)")
      ("idle-timeout", po::value(&so.idle_timeout_s)->default_value(so.idle_timeout_s),
       "seconds a keep-alive connection may wait for its next request");
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
  if (answer_mb < 1 || answer_mb > (1u << 20)) return Fail("serve", "--max-answer-mb must be 1..1048576");
  for (double t : {so.request_timeout_s, so.idle_timeout_s}) {
    if (!std::isfinite(t) || t < 0.1 || t > 86400) return Fail("serve", "timeouts must be 0.1..86400 s");
  }
  if (!std::isfinite(so.budget_wait_s) || so.budget_wait_s < 0 || so.budget_wait_s > 3600) {
    return Fail("serve", "--budget-wait must be 0..3600 s");
  }
  if (so.max_connections < 1 || so.max_connections_per_address < 1 || so.heavy_threads < 1 ||
      so.io_threads < 1 || so.heavy_threads > 256 || so.io_threads > 64 || threads < 0 || threads > 1024) {
    return Fail("serve", "connection caps and thread counts must be positive (threads <= 1024)");
  }
  if (so.max_open_shards < 1 || so.max_open_shards > 100000) return Fail("serve", "--max-open-shards must be 1..100000");
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in || !std::getline(in, token)) return Fail("serve", absl::StrCat("cannot read ", token_file));
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
    if (token.empty()) return Fail("serve", absl::StrCat(token_file, ": empty token"));
  }
  so.token = token;
  so.max_answer_bytes = answer_mb << 20;
  // Every idle connection is a descriptor: use all the hard limit allows.
  if (rlimit rl{}; getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }

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

  so.cache_bytes = cache_mb << 20;
  so.threads = threads;
  absl::StatusOr<std::vector<serve::NamedTable>> tables = serve::OpenTables(paths, so);
  if (!tables.ok()) return Fail("serve", tables.status().message());
  serve::Server server(std::move(*tables), so);
  absl::StatusOr<int> bound = server.Bind(bind, port);
  if (!bound.ok()) return Fail("serve", bound.status().message());
  const std::string host = bind.find(':') != std::string::npos ? absl::StrCat("[", bind, "]") : bind;
  {
    // Scoped: a run reopened while serving must not stay open through this list.
    const auto served = server.tables();
    for (const serve::NamedTable& t : *served) {
      std::printf("table %s: %s\n", t.name.c_str(), t.table->path().c_str());
    }
    std::printf("serving %zu table(s) at http://%s:%d/  (Ctrl-C stops)\n", served->size(),
                host == "0.0.0.0" ? "127.0.0.1" : host.c_str(), *bound);
  }
  if (!server.checks_host()) {
    std::printf("bound to %s, not a loopback address: the tables are open to the network and any "
                "Host is accepted%s\n", bind.c_str(), so.token.empty() ? " (no --token set)" : "");
  }
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
