// tracetable serve under slow, greedy and hostile clients, over real sockets
// on loopback: slow and idle connections never block cheap calls, request
// deadlines and idle timeouts close connections, connection caps, the Host
// check, the token, parameter validation, the answer budget (413) and
// streamed answers equal to the whole-body ones byte for byte. Plus the
// pieces (work pool, answer budget, request access) on their own.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/common.h"
#include "gtest/gtest.h"
#include "query/serve/answer_budget.h"
#include "query/serve/api.h"
#include "query/serve/fair_clock.h"
#include "query/serve/gzip_stream.h"
#include "query/serve/request_access.h"
#include "query/serve/server.h"
#include "query/serve/work_pool.h"
#include "zlib.h"
#include "tests/serve/gunzip.h"

namespace tracetable::serve {
namespace {
namespace fs = std::filesystem;

constexpr int kEvents = 20000;

// A raw client socket: what a slow or idle client does, byte by byte.
class Conn {
 public:
  // rcvbuf > 0: a small receive buffer, so a client that does not read
  // stops the server's writes soon.
  explicit Conn(int port, int rcvbuf = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf > 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  }
  ~Conn() {
    if (fd_ >= 0) close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  bool ok() const { return ok_; }
  int fd() const { return fd_; }
  bool Send(std::string_view s) { return send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size()); }
  // Everything until the peer closes (or `wait_ms` passes without a byte,
  // or `until` has been read). *closed tells whether the peer closed.
  std::string ReadAll(int wait_ms, bool* closed, std::string_view until = {}) {
    std::string out;
    *closed = false;
    for (;;) {
      if (!until.empty() && out.find(until) != std::string::npos) return out;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, wait_ms) <= 0) return out;
      char buf[65536];
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        *closed = true;
        return out;
      }
      out.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
};

struct Http {
  int status = -1;
  std::string head, body;
};

// One GET over a fresh connection (Connection: close), body de-chunked.
Http Get(int port, const std::string& target, const std::string& extra_headers = "",
         const std::string& host = "localhost") {
  Conn c(port);
  Http h;
  if (!c.ok() || !c.Send(absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: ", host, "\r\n", extra_headers,
                                      "Connection: close\r\n\r\n"))) {
    return h;
  }
  bool closed = false;
  const std::string all = c.ReadAll(60000, &closed);
  const size_t end = all.find("\r\n\r\n");
  if (end == std::string::npos || all.size() < 12) return h;
  h.head = all.substr(0, end + 2);
  h.status = std::atoi(all.c_str() + 9);
  std::string rest = all.substr(end + 4);
  if (h.head.find("Transfer-Encoding: chunked") == std::string::npos) {
    h.body = rest;
    return h;
  }
  size_t at = 0;
  for (;;) {
    const size_t eol = rest.find("\r\n", at);
    if (eol == std::string::npos) return Http{-2, h.head, "bad chunking"};
    const size_t n = std::stoul(rest.substr(at, eol - at), nullptr, 16);
    if (n == 0) break;
    h.body.append(rest, eol + 2, n);
    at = eol + 2 + n + 2;
  }
  return h;
}

int Ingest(const std::string& input, const std::string& out) {
  std::vector<std::string> args = {"ingest", input, "-o", out, "--force", "-q"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return cli::IngestMain(static_cast<int>(argv.size()), argv.data());
}

// A server of its own per test, on an ephemeral loopback port.
class Running {
 public:
  Running(const fs::path& table, ServeOptions so) {
    so.cache_bytes = 8 << 20;
    absl::StatusOr<std::vector<NamedTable>> tables = OpenTables({table.string()}, so);
    EXPECT_TRUE(tables.ok()) << tables.status();
    server_ = std::make_unique<Server>(std::move(*tables), so);
    absl::StatusOr<int> port = server_->Bind("127.0.0.1", 0);
    EXPECT_TRUE(port.ok()) << port.status();
    port_ = *port;
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~Running() {
    server_->Stop();
    thread_.join();
  }
  int port() const { return port_; }
  Server& server() { return *server_; }

 private:
  std::unique_ptr<Server> server_;
  std::thread thread_;
  int port_ = 0;
};

class ServeLimitsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / absl::StrCat("tt_serve_limits_", getpid()));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    std::ofstream o(*dir_ / "t.json");
    o << "{\"traceEvents\":[\n";
    for (int i = 0; i < kEvents; ++i) {
      o << "{\"ph\":\"X\",\"pid\":1,\"tid\":" << 1 + i % 4 << ",\"ts\":" << 1000 + i * 10
        << ",\"dur\":7,\"name\":\"op." << i % 37 << "\",\"cat\":\"c\"},\n";
    }
    o << "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":" << 1000 + kEvents * 10 << ",\"dur\":1,\"name\":\"end\"}\n]}\n";
    o.close();
    ASSERT_EQ(Ingest((*dir_ / "t.json").string(), (*dir_ / "t.tracetable").string()), 0);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static fs::path TablePath() { return *dir_ / "t.tracetable"; }
  // 260 000 events, 10 us apart on 4 threads: more than a heavy call's
  // 250 000, and answers that outgrow the kernel's socket buffers (up to 4 MB
  // on loopback), so an answer to a client that does not read stalls.
  static fs::path BigTablePath() {
    const fs::path big = *dir_ / "big.tracetable";
    if (fs::exists(big)) return big;
    std::ofstream o(*dir_ / "big.json");
    o << "{\"traceEvents\":[\n";
    for (int i = 0; i < 260000; ++i) {
      o << "{\"ph\":\"X\",\"pid\":1,\"tid\":" << 1 + i % 4 << ",\"ts\":" << 1000 + i * 10
        << ",\"dur\":7,\"name\":\"op." << i % 37 << "\"},\n";
    }
    o << "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"name\":\"start\"}\n]}\n";
    o.close();
    EXPECT_EQ(Ingest((*dir_ / "big.json").string(), big.string()), 0);
    return big;
  }
  static fs::path* dir_;
};
fs::path* ServeLimitsTest::dir_ = nullptr;

TEST_F(ServeLimitsTest, SlowAndIdleClientsDoNotBlockCheapCalls) {
  ServeOptions so;
  so.threads = 2;
  Running r(TablePath(), so);
  // More slow-header and idle connections than there are workers (a
  // thread-per-connection server has none left for anyone else).
  std::vector<std::unique_ptr<Conn>> held;
  for (int i = 0; i < 40; ++i) {
    held.push_back(std::make_unique<Conn>(r.port()));
    ASSERT_TRUE(held.back()->ok());
    ASSERT_TRUE(held.back()->Send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: "));
  }
  for (int i = 0; i < 200; ++i) {
    held.push_back(std::make_unique<Conn>(r.port()));
    ASSERT_TRUE(held.back()->ok());
  }
  Http h = Get(r.port(), "/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body, "{\"ok\":true,\"tables\":1}\n");
  Http w = Get(r.port(), "/api/tables/t/window?start_us=1000&end_us=2000");
  EXPECT_EQ(w.status, 200) << w.body;
  EXPECT_NE(w.body.find("\"traceEvents\""), std::string::npos);
}

// The order in which the answers on `conns` start: ranks[i] is 0 for the
// first connection to get a byte, and so on. Reads every answer to its end
// (or the peer's close), so streamed answers can finish and free their budget.
// Waits (up to a minute) until the light pool holds `queued` calls waiting
// and `running` running: what a test must know before it lets the worker go.
bool LightLoadReaches(const Server& server, size_t queued, size_t running) {
  for (int i = 0; i < 12000; ++i) {
    const PoolLoad l = server.load().light;
    if (l.queued == queued && l.running == running) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const PoolLoad l = server.load().light;
  ADD_FAILURE() << "light pool: " << l.queued << " queued, " << l.running << " running; want " << queued << ", "
                << running;
  return false;
}

std::vector<int> AnswerOrder(const std::vector<Conn*>& conns) {
  std::vector<int> ranks(conns.size(), -1);
  std::vector<bool> done(conns.size(), false);
  int next = 0;
  size_t open = conns.size();
  while (open > 0) {
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    for (size_t i = 0; i < conns.size(); ++i) {
      if (done[i]) continue;
      fds.push_back({conns[i]->fd(), POLLIN, 0});
      which.push_back(i);
    }
    if (poll(fds.data(), fds.size(), 60000) <= 0) break;  // nothing for a minute: give up
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const size_t i = which[k];
      char buf[1 << 16];
      const ssize_t n = recv(fds[k].fd, buf, sizeof(buf), 0);
      if (n > 0 && ranks[i] < 0) ranks[i] = next++;
      if (n <= 0) {
        done[i] = true;
        --open;
      }
    }
  }
  return ranks;
}

// Only windows over many events or bins are heavy: with the one heavy
// worker's slot held by an answer its client does not read, small and
// medium windows of a table too big to read whole are still answered.
TEST_F(ServeLimitsTest, SmallWindowsOfABigTableAreNotHeavy) {
  ServeOptions so;
  so.heavy_threads = 1;
  so.budget_wait_s = 1;
  Running r(BigTablePath(), so);
  Conn stalled(r.port(), 4096);
  ASSERT_TRUE(stalled.Send("GET /api/tables/big/window?start_us=1000&end_us=1501000&resolution_us=0 HTTP/1.1\r\n"
                           "Host: localhost\r\n\r\n"));
  bool closed = false;
  ASSERT_NE(stalled.ReadAll(60000, &closed, "\r\n\r\n").find("200 OK"), std::string::npos);
  for (const std::string q : {"start_us=1000&end_us=2000", "start_us=1000&end_us=201000&resolution_us=10.5"}) {
    Http h = Get(r.port(), "/api/tables/big/window?" + q);
    EXPECT_EQ(h.status, 200) << q << " " << h.body.substr(0, 200);
  }
  // The heavy one waits for the slot (then 503 at --budget-wait).
  EXPECT_EQ(Get(r.port(), "/api/tables/big/window?resolution_us=0&limit=10").status, 503);
}

// A heavy window's answer, once sent whole, is kept and sent again without
// a worker: with the one heavy slot held by an answer its client does not
// read, the same window (plain and gzip) is answered, byte for byte.
TEST_F(ServeLimitsTest, HeavyWindowsRepeatFromTheCache) {
  ServeOptions so;
  so.heavy_threads = 1;
  so.budget_wait_s = 1;
  Running r(BigTablePath(), so);
  const std::string w = "/api/tables/big/window?start_us=1000&end_us=301000&resolution_us=0";
  const std::string zip = "Accept-Encoding: gzip\r\n";
  Http plain = Get(r.port(), w), zipped = Get(r.port(), w, zip);
  ASSERT_EQ(plain.status, 200);
  ASSERT_EQ(zipped.status, 200);
  ASSERT_NE(plain.head.find("Transfer-Encoding: chunked"), std::string::npos) << "made and streamed";
  Conn stalled(r.port(), 4096);
  ASSERT_TRUE(stalled.Send("GET /api/tables/big/window?start_us=1000&end_us=1501000&resolution_us=0 HTTP/1.1\r\n"
                           "Host: localhost\r\n\r\n"));
  bool closed = false;
  ASSERT_NE(stalled.ReadAll(60000, &closed, "\r\n\r\n").find("200 OK"), std::string::npos);
  Http again = Get(r.port(), w);
  EXPECT_EQ(again.status, 200) << again.body.substr(0, 200);
  EXPECT_TRUE(again.body == plain.body);
  Http zagain = Get(r.port(), w, zip);
  EXPECT_EQ(zagain.status, 200);
  EXPECT_NE(zagain.head.find("Content-Encoding: gzip"), std::string::npos) << zagain.head;
  EXPECT_TRUE(Gunzip(zagain.body) == plain.body);
  // Other parameters are another answer: made anew, so it waits for the slot.
  EXPECT_EQ(Get(r.port(), w + "&limit=29999").status, 503);
}

// Identical heavy windows arriving together are made once: the second waits
// for the first (whose client reads only later) and is sent the kept answer
// (whole, with a length) instead of making and streaming its own.
TEST_F(ServeLimitsTest, IdenticalHeavyWindowsAreMadeOnce) {
  ServeOptions so;
  so.budget_wait_s = 600;
  Running r(BigTablePath(), so);
  // ~7 MB of JSON: more than the socket buffers take, less than the largest
  // answer the cache keeps (a quarter of 1/8 of 256 MB).
  const std::string w = "/api/tables/big/window?start_us=1000&end_us=451000&resolution_us=0";
  Conn first(r.port(), 4096);
  ASSERT_TRUE(first.Send(absl::StrCat("GET ", w, " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")));
  bool closed = false;
  std::string got = first.ReadAll(60000, &closed, "\r\n\r\n");
  ASSERT_NE(got.find("200 OK"), std::string::npos);
  auto second = std::async(std::launch::async, [&] { return Get(r.port(), w); });
  EXPECT_EQ(second.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout)
      << "answered while the first was still being sent";
  got += first.ReadAll(60000, &closed);
  ASSERT_TRUE(closed);
  const size_t end = got.find("\r\n\r\n");
  Http h = second.get();
  ASSERT_EQ(h.status, 200);
  EXPECT_EQ(h.head.find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_NE(h.head.find("Content-Length: "), std::string::npos);
  EXPECT_GT(h.body.size(), 4u << 20);
  // The first answer, de-chunked, is the same body.
  std::string body;
  for (size_t at = end + 4;;) {
    const size_t eol = got.find("\r\n", at);
    ASSERT_NE(eol, std::string::npos);
    const size_t n = std::stoul(got.substr(at, eol - at), nullptr, 16);
    if (n == 0) break;
    body.append(got, eol + 2, n);
    at = eol + 2 + n + 2;
  }
  EXPECT_TRUE(body == h.body);
}

// The light pool runs the cheapest queued call first, and among calls alike
// the connection served least lately: a keep-alive client that has kept the
// server busy waits behind a new one. All of it is queued behind one light
// call held (waiting for answer budget) by a heavy answer whose client does
// not read, so the order the answers start in is the order the queue gives
// (the test waits until the server reports every call queued).
TEST_F(ServeLimitsTest, CheapCallsAndNewClientsGoFirst) {
  const fs::path big = BigTablePath();
  const std::string stalling = "/api/tables/big/window?start_us=1000&end_us=1501000&resolution_us=0";
  // 240 000 events at 18 462 bins: light, but a large working set.
  const std::string blocking = "/api/tables/big/window?start_us=1000&end_us=2401000&resolution_us=130";
  const std::string medium = "/api/tables/big/window?start_us=1000&end_us=201000&resolution_us=10.5";
  const std::string cheap = "/api/tables/big/window?start_us=1000&end_us=2000";
  ServeOptions so;
  so.threads = 1;
  so.budget_wait_s = 600;
  {
    // Room for the blocker's working set and a little more: not while the
    // stalled answer holds its pending items.
    absl::StatusOr<std::vector<NamedTable>> t = OpenTables({big.string()}, so);
    ASSERT_TRUE(t.ok());
    const auto ahead = [&](const std::string& target) {
      Params p;
      std::string path;
      EXPECT_TRUE(SplitTarget(target, &path, &p));
      EXPECT_FALSE(IsHeavyCall((*t)[0].table.get(), "window", p) && target != stalling) << target;
      return WorkingBytesEstimate(*(*t)[0].table, "window", p);
    };
    so.max_answer_bytes = ahead(blocking) + (1 << 20);
    ASSERT_LE(ahead(stalling), so.max_answer_bytes);
  }
  Running r(big, so);
  const auto ask = [](Conn& c, const std::string& target, bool close) {
    return c.Send(absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: localhost\r\n",
                               close ? "Connection: close\r\n" : "", "\r\n"));
  };
  // Greedy keep-alive clients: each has had three medium windows answered.
  std::vector<std::unique_ptr<Conn>> greedy;
  for (int i = 0; i < 4; ++i) {
    greedy.push_back(std::make_unique<Conn>(r.port()));
    for (int k = 0; k < 3; ++k) {
      ASSERT_TRUE(ask(*greedy.back(), medium, false));
      bool closed = false;
      const std::string got = greedy.back()->ReadAll(60000, &closed, "\r\n0\r\n\r\n");
      ASSERT_NE(got.find("200 OK"), std::string::npos) << got.substr(0, 200);
    }
  }
  auto stalled = std::make_unique<Conn>(r.port(), 4096);
  ASSERT_TRUE(ask(*stalled, stalling, true));
  bool closed = false;
  ASSERT_NE(stalled->ReadAll(60000, &closed, "\r\n\r\n").find("200 OK"), std::string::npos);
  // The light worker takes this one and waits for room.
  ASSERT_TRUE(LightLoadReaches(r.server(), 0, 0));
  Conn blocker(r.port());
  ASSERT_TRUE(ask(blocker, blocking, true));
  ASSERT_TRUE(LightLoadReaches(r.server(), 0, 1));
  // Queued behind it: the greedy clients' next medium windows, then a new
  // client's, then a small window.
  for (auto& g : greedy) ASSERT_TRUE(ask(*g, medium, true));
  Conn fresh(r.port());
  ASSERT_TRUE(ask(fresh, medium, true));
  Conn small(r.port());
  ASSERT_TRUE(ask(small, cheap, true));
  // Every request read and queued before the worker is let go.
  ASSERT_TRUE(LightLoadReaches(r.server(), 6, 1));
  EXPECT_TRUE(blocker.ReadAll(0, &closed).empty()) << "the blocker was answered while the budget was full";
  EXPECT_TRUE(small.ReadAll(0, &closed).empty());
  stalled.reset();  // the client goes away: its answer's budget is freed
  std::vector<Conn*> order = {&blocker, &small, &fresh};
  for (auto& g : greedy) order.push_back(g.get());
  const std::vector<int> ranks = AnswerOrder(order);
  // The blocker runs first, but the small window is made in a quarter of a
  // millisecond after it, which can beat the blocker's head through the io
  // threads: either of the two may start first, before every medium window.
  EXPECT_LE(ranks[0], 1) << "the blocker before every queued medium window";
  EXPECT_LE(ranks[1], 1) << "the small window before every queued medium one";
  EXPECT_EQ(ranks[2], 2) << "the new client before the greedy ones";
  for (size_t i = 3; i < ranks.size(); ++i) EXPECT_GT(ranks[i], 2) << i;
}

TEST_F(ServeLimitsTest, RequestDeadlineAndIdleTimeoutCloseConnections) {
  ServeOptions so;
  so.request_timeout_s = 0.3;
  so.idle_timeout_s = 0.3;
  Running r(TablePath(), so);
  Conn slow(r.port());
  ASSERT_TRUE(slow.Send("GET /healthz HTTP/1.1\r\nHost: loc"));
  bool closed = false;
  // Still sending, a byte now and then, past the deadline: closed anyway.
  for (int i = 0; i < 20 && !closed; ++i) {
    slow.Send("a");
    std::string got = slow.ReadAll(100, &closed);
    EXPECT_EQ(got, "");
  }
  EXPECT_TRUE(closed);
  Conn idle(r.port());
  std::string got = idle.ReadAll(30000, &closed);
  EXPECT_TRUE(closed);
  EXPECT_EQ(got, "");
  // A keep-alive connection answers, then is closed when idle.
  Conn ka(r.port());
  ASSERT_TRUE(ka.Send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  got = ka.ReadAll(30000, &closed);
  EXPECT_TRUE(closed);
  EXPECT_NE(got.find("200 OK"), std::string::npos);
}

TEST_F(ServeLimitsTest, ConnectionCaps) {
  for (const bool per_address : {true, false}) {
    ServeOptions so;
    (per_address ? so.max_connections_per_address : so.max_connections) = 5;
    Running r(TablePath(), so);
    std::vector<std::unique_ptr<Conn>> held;
    for (int i = 0; i < 5; ++i) {
      held.push_back(std::make_unique<Conn>(r.port()));
      ASSERT_TRUE(held.back()->Send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
      bool closed = false;
      const std::string got = held.back()->ReadAll(30000, &closed, "\r\n\r\n");
      ASSERT_NE(got.find("200 OK"), std::string::npos);  // admitted and answered
    }
    Http over = Get(r.port(), "/healthz");
    EXPECT_NE(over.status, 200) << "per_address=" << per_address;
    if (over.status != -1) {
      EXPECT_EQ(over.status, 503);
    }
    held.pop_back();
    // The server sees the close soon; then one more is admitted.
    int status = 0;
    for (int i = 0; i < 500 && status != 200; ++i) {
      status = Get(r.port(), "/healthz").status;
      if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(status, 200);
  }
}

TEST_F(ServeLimitsTest, HostHeaderIsChecked) {
  ServeOptions so;
  so.allow_hosts = {"trace.box.example"};
  Running r(TablePath(), so);
  ASSERT_TRUE(r.server().checks_host());
  const std::string port = absl::StrCat(r.port());
  for (const std::string& host : std::vector<std::string>{"localhost", absl::StrCat("localhost:", port), "127.0.0.1",
                                 absl::StrCat("127.0.0.1:", port), absl::StrCat("[::1]:", port),
                                 "LocalHost", "trace.box.example:80"}) {
    EXPECT_EQ(Get(r.port(), "/api/tables", "", host).status, 200) << host;
  }
  for (const std::string& host : std::vector<std::string>{"evil.example", absl::StrCat("evil.example:", port),
                                 "localhost.evil.example", "127.0.0.1.nip.io", ""}) {
    Http h = Get(r.port(), "/api/tables", "", host);
    EXPECT_EQ(h.status, 403) << host;
    EXPECT_NE(h.body.find("\"error\""), std::string::npos);
  }
}

TEST_F(ServeLimitsTest, Token) {
  ServeOptions so;
  so.token = "s3cret-token";
  Running r(TablePath(), so);
  EXPECT_EQ(Get(r.port(), "/api/tables").status, 401);
  EXPECT_EQ(Get(r.port(), "/healthz").status, 401);
  EXPECT_EQ(Get(r.port(), "/api/tables", "Authorization: Bearer wrong\r\n").status, 401);
  EXPECT_EQ(Get(r.port(), "/api/tables?token=s3cret-tokeX").status, 401);
  EXPECT_EQ(Get(r.port(), "/api/tables", "Authorization: Bearer s3cret-token\r\n").status, 200);
  // The viewer's first load: the token in the URL, then a cookie carries it.
  Http first = Get(r.port(), "/?token=s3cret-token");
  EXPECT_EQ(first.status, 200);
  EXPECT_NE(first.head.find("Set-Cookie: tt_token=s3cret-token; Path=/; HttpOnly; SameSite=Strict"),
            std::string::npos)
      << first.head;
  EXPECT_EQ(Get(r.port(), "/api/tables", "Cookie: a=b; tt_token=s3cret-token\r\n").status, 200);
  EXPECT_EQ(Get(r.port(), "/api/tables", "Cookie: tt_token=nope\r\n").status, 401);
}

TEST_F(ServeLimitsTest, NumericParametersValidatedAfterParsing) {
  Running r(TablePath(), ServeOptions());
  for (const std::string v : {"1e-300", "0.000001", "1e-7", "0.0000001", "5e-13", "1e-99999"}) {
    Http h = Get(r.port(), "/api/tables/t/window?resolution_us=" + v);
    EXPECT_EQ(h.status, 400) << v << " " << h.body;
    EXPECT_NE(h.body.find("\"parameter\":\"resolution_us\""), std::string::npos) << v;
  }
  for (const std::string v : {"nan", "inf", "-inf", "1e400", "0x10", ""}) {
    if (v.empty()) continue;
    EXPECT_EQ(Get(r.port(), "/api/tables/t/window?start_us=" + v).status, 400) << v;
  }
  // Zero, however written, is resolution 0 (every event).
  for (const std::string v : {"0", "0.0", "0e-300", "0e5"}) {
    Http h = Get(r.port(), "/api/tables/t/window?start_us=1000&end_us=1100&resolution_us=" + v);
    EXPECT_EQ(h.status, 200) << v << " " << h.body;
  }
}

TEST_F(ServeLimitsTest, StreamedAnswerEqualsWholeOne) {
  Running r(TablePath(), ServeOptions());
  const auto served = r.server().tables();
  const tracetable::Table& t = *(*served)[0].table;
  for (const std::string q : {"resolution_us=0", "resolution_us=0&limit=4096", "resolution_us=0&limit=6144",
                              "resolution_us=0&limit=6145", "resolution_us=0.5"}) {
    Params p;
    std::string path;
    ASSERT_TRUE(SplitTarget("/x?" + q, &path, &p));
    const std::string whole = WindowReply(t, p).body;
    ASSERT_FALSE(whole.empty());
    Reply streamed = WindowReply(t, p, true);
    ASSERT_TRUE(streamed.chunks) << q;
    EXPECT_TRUE(streamed.body.empty());
    EXPECT_GT(streamed.chunks->held_bytes(), 0u);
    Drain(&streamed);
    EXPECT_EQ(streamed.body, whole) << q;
    Http h = Get(r.port(), "/api/tables/t/window?" + q);
    ASSERT_EQ(h.status, 200);
    EXPECT_NE(h.head.find("Transfer-Encoding: chunked"), std::string::npos) << h.head;
    EXPECT_EQ(h.body, whole) << q;
    Http z = Get(r.port(), "/api/tables/t/window?" + q, "Accept-Encoding: gzip\r\n");
    ASSERT_EQ(z.status, 200);
    EXPECT_NE(z.head.find("Content-Encoding: gzip"), std::string::npos);
    EXPECT_EQ(Gunzip(z.body), whole) << q;
  }
}

TEST_F(ServeLimitsTest, AnswerBudget413) {
  ServeOptions so;
  so.max_answer_bytes = 256 << 10;
  Running r(TablePath(), so);
  // Every event of the table cannot fit in 256 KB, ever: 413, and says why.
  Http big = Get(r.port(), "/api/tables/t/window?resolution_us=0");
  EXPECT_EQ(big.status, 413) << big.body.substr(0, 200);
  EXPECT_NE(big.body.find("--max-answer-mb"), std::string::npos);
  Http stats = Get(r.port(), "/api/tables/t/stats");
  EXPECT_EQ(stats.status, 413) << stats.body.substr(0, 200);
  // Small answers still flow.
  EXPECT_EQ(Get(r.port(), "/api/tables/t/window?start_us=1000&end_us=2000").status, 200);
  EXPECT_EQ(Get(r.port(), "/api/tables/t/stats?start_us=1000&end_us=2000").status, 200);
}

TEST(AnswerBudget, BusyThenFreedAndTooLarge) {
  AnswerBudget b(1000);
  std::unique_ptr<AnswerBudget::Reservation> a, c, d;
  EXPECT_EQ(b.Reserve(1001, &a), AnswerBudget::Verdict::kTooLarge);
  EXPECT_EQ(b.Reserve(600, &a), AnswerBudget::Verdict::kOk);
  EXPECT_EQ(b.Reserve(500, &c), AnswerBudget::Verdict::kBusy);
  EXPECT_EQ(a->Resize(300), AnswerBudget::Verdict::kOk);
  EXPECT_EQ(b.Reserve(500, &c), AnswerBudget::Verdict::kOk);
  EXPECT_EQ(a->Resize(600), AnswerBudget::Verdict::kBusy);
  EXPECT_EQ(a->bytes(), 300u);
  EXPECT_EQ(b.in_use(), 800u);
  a.reset();
  c.reset();
  EXPECT_EQ(b.in_use(), 0u);
  EXPECT_EQ(b.Reserve(1000, &d), AnswerBudget::Verdict::kOk);
}

// A reservation that does not fit waits (until its deadline) for others to
// be returned instead of being refused at once.
TEST(AnswerBudget, WaitsForRoomUntilItsDeadline) {
  AnswerBudget b(1000);
  std::unique_ptr<AnswerBudget::Reservation> a, c;
  ASSERT_EQ(b.Reserve(800, &a), AnswerBudget::Verdict::kOk);
  auto waiting = std::async(std::launch::async, [&] {
    return b.Reserve(500, &c, std::chrono::steady_clock::now() + std::chrono::minutes(5));
  });
  // Not yet: the waiter is blocked while `a` holds 800 (wait_for(0) only looks).
  EXPECT_EQ(waiting.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  ASSERT_EQ(a->Resize(400), AnswerBudget::Verdict::kOk);  // shrinking frees room
  EXPECT_EQ(waiting.get(), AnswerBudget::Verdict::kOk);
  EXPECT_EQ(b.in_use(), 900u);
  // A deadline already past: refused at once.
  std::unique_ptr<AnswerBudget::Reservation> d;
  EXPECT_EQ(b.Reserve(200, &d, std::chrono::steady_clock::now()), AnswerBudget::Verdict::kBusy);
}

// Holds a one-worker pool's worker until Release(), so that what is posted
// meanwhile queues.
class PoolBlocker {
 public:
  explicit PoolBlocker(WorkPool* pool) {
    std::shared_future<void> gate = release_.get_future().share();
    std::promise<void> started;
    std::future<void> running = started.get_future();
    const bool posted = pool->TryPost([gate, &started] {
      started.set_value();
      gate.wait();
    });
    EXPECT_TRUE(posted);
    if (posted) running.wait();
  }
  ~PoolBlocker() { Release(); }
  void Release() {
    if (!released_) release_.set_value();
    released_ = true;
  }

 private:
  std::promise<void> release_;
  bool released_ = false;
};

TEST(WorkPool, RefusesPastItsQueueButTakesContinuations) {
  WorkPool pool(1, 2);
  PoolBlocker blocker(&pool);
  std::atomic<int> ran{0};
  EXPECT_TRUE(pool.TryPost([&] { ++ran; }));
  EXPECT_TRUE(pool.TryPost([&] { ++ran; }));
  EXPECT_FALSE(pool.TryPost([&] { ++ran; }));
  EXPECT_TRUE(pool.Post([&] { ++ran; }));
  EXPECT_EQ(pool.load().queued, 3u);
  EXPECT_EQ(pool.load().running, 1u);
  blocker.Release();
  for (int i = 0; i < 1000 && ran.load() < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(ran.load(), 3);
  for (int i = 0; i < 1000 && pool.load().running > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(pool.load().queued, 0u);
  EXPECT_EQ(pool.load().running, 0u);
}

TEST(WorkPool, RunsTheLowestLaneThenTagFirst) {
  WorkPool pool(1, 100);
  PoolBlocker blocker(&pool);
  std::mutex mu;
  std::string order;
  std::promise<void> all;
  const auto note = [&](char c) {
    return [&, c] {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(c);
      if (order.size() == 5) all.set_value();
    };
  };
  ASSERT_TRUE(pool.TryPost(note('e'), {1, 5}));
  ASSERT_TRUE(pool.TryPost(note('d'), {1, 0}));
  ASSERT_TRUE(pool.TryPost(note('b'), {0, 9}));
  ASSERT_TRUE(pool.TryPost(note('c'), {0, 9}));  // same place: arrival order
  ASSERT_TRUE(pool.Post(note('a'), {0, -3}));
  blocker.Release();
  all.get_future().wait();
  EXPECT_EQ(order, "abcde");
}

TEST(FairClock, BusyConnectionsWaitBehindNewOnesButNobodyForever) {
  FairClock clock(10);
  int64_t busy = FairClock::kNew, fresh = FairClock::kNew, quiet = FairClock::kNew;
  EXPECT_EQ(clock.Tag(1, &quiet), -10);
  int64_t last = 0;
  for (int i = 0; i < 20; ++i) {
    last = clock.Tag(5, &busy);
    clock.Started(last);
  }
  EXPECT_EQ(last, -10 + 19 * 5);
  // The busy connection's next request is tagged past `now`; a new one's and
  // one back after a long pause come in `credit` before `now`.
  EXPECT_EQ(clock.Tag(5, &busy), 90);
  EXPECT_EQ(clock.Tag(1, &fresh), 85 - 10);
  EXPECT_EQ(clock.Tag(1, &quiet), 85 - 10);
  EXPECT_LT(clock.Tag(1, &fresh), 90);
}

TEST(RequestAccess, TargetHostCookieSecret) {
  std::string path;
  Params p;
  ASSERT_TRUE(SplitTarget("/api/tables/a%20b/window?q=x+y%26z&tracks=1&tracks=2&flag", &path, &p));
  EXPECT_EQ(path, "/api/tables/a b/window");
  EXPECT_EQ(p.find("q")->second, "x y&z");
  EXPECT_EQ(p.count("tracks"), 2u);
  EXPECT_EQ(p.find("flag")->second, "");
  EXPECT_FALSE(SplitTarget("/a%2", &path, &p));
  EXPECT_FALSE(SplitTarget("/a?b=%zz", &path, &p));
  EXPECT_TRUE(HostAllowed("[::1]:80", "127.0.0.1", {}));
  EXPECT_TRUE(HostAllowed("10.0.0.5:8080", "10.0.0.5", {}));
  EXPECT_TRUE(HostAllowed("[fe80::1]", "fe80::1", {}));
  EXPECT_FALSE(HostAllowed("10.0.0.6", "10.0.0.5", {}));
  EXPECT_TRUE(HostAllowed("Box:1", "127.0.0.1", {"box"}));
  EXPECT_FALSE(HostAllowed("", "127.0.0.1", {}));
  EXPECT_EQ(CookieValue("a=1; tt_token=xyz; b=2", "tt_token"), "xyz");
  EXPECT_EQ(CookieValue("xtt_token=1", "tt_token"), "");
  EXPECT_TRUE(SameSecret("abc", "abc"));
  EXPECT_FALSE(SameSecret("abc", "abd"));
  EXPECT_FALSE(SameSecret("abc", "abcd"));
  EXPECT_FALSE(SameSecret("", "a"));
}

TEST(GzipStream, PiecesMakeOneStream) {
  std::string whole, zipped;
  GzipStream z;
  for (int i = 0; i < 50; ++i) {
    const std::string piece = absl::StrCat("piece ", i, std::string(i * 100, 'x'), "\n");
    whole += piece;
    ASSERT_TRUE(z.Add(piece, false, &zipped));
  }
  ASSERT_TRUE(z.Add("", true, &zipped));
  EXPECT_EQ(Gunzip(zipped), whole);
}

}  // namespace
}  // namespace tracetable::serve
