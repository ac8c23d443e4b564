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
#include "query/serve/gzip_stream.h"
#include "query/serve/request_access.h"
#include "query/serve/server.h"
#include "query/serve/work_pool.h"
#include "zlib.h"

namespace tracetable::serve {
namespace {
namespace fs = std::filesystem;

constexpr int kEvents = 20000;

// A raw client socket: what a slow or idle client does, byte by byte.
class Conn {
 public:
  explicit Conn(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
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

std::string Gunzip(const std::string& in) {
  z_stream z{};
  inflateInit2(&z, 15 + 16);
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END ? out : "<bad gzip>";
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
  const tracetable::Table& t = *r.server().tables()[0].table;
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

TEST(WorkPool, RefusesPastItsQueueButTakesContinuations) {
  WorkPool pool(1, 2);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  ASSERT_TRUE(pool.TryPost([&] {
    started.set_value();
    gate.wait();
  }));
  started.get_future().wait();
  std::atomic<int> ran{0};
  EXPECT_TRUE(pool.TryPost([&] { ++ran; }));
  EXPECT_TRUE(pool.TryPost([&] { ++ran; }));
  EXPECT_FALSE(pool.TryPost([&] { ++ran; }));
  EXPECT_TRUE(pool.Post([&] { ++ran; }));
  release.set_value();
  for (int i = 0; i < 1000 && ran.load() < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(ran.load(), 3);
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
