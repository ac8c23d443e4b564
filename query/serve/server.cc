#include "query/serve/server.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <semaphore>
#include <string_view>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "boost/asio.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "boost/beast/http/span_body.hpp"
#include "format/absl_compat.h"
#include "query/serve/answer_budget.h"
#include "query/serve/answer_cache.h"
#include "query/serve/api.h"
#include "query/serve/fair_clock.h"
#include "query/serve/gzip_stream.h"
#include "query/serve/request_access.h"
#include "query/serve/run_reload.h"
#include "query/serve/table_watch.h"
#include "query/serve/flow_api.h"
#include "query/serve/memory_api.h"
#include "query/serve/tiles_api.h"
#include "query/serve/index_page.h"
#include "query/serve/viewer_assets.h"
#include "query/serve/work_pool.h"
#include "store/file_list.h"

namespace tracetable::serve {
namespace fs = std::filesystem;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

// A table, or a run of shards (store/run_manifest.h), which opens as one.
bool IsTableDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec) && (fs::exists(p / kFileListName, ec) || fs::exists(p / "CURRENT", ec) ||
                                     fs::exists(p / "RUN", ec));
}

std::string TableName(const fs::path& p) {
  fs::path q = p;
  if (q.filename().empty()) q = q.parent_path();  // "a.tracetable/"
  std::string name = q.filename().string();
  const std::string_view suffix = ".tracetable";
  if (name.size() > suffix.size() && name.ends_with(suffix)) name.resize(name.size() - suffix.size());
  if (name.empty()) name = "table";
  return name;
}

constexpr size_t kMaxHeadBytes = 16 << 10;
constexpr size_t kMaxBodyBytes = 64 << 10;
// Bytes a streamed answer holds besides its producer's: the piece being
// formatted and the one being sent, each about kChunkItems items.
constexpr uint64_t kStreamBufferBytes = 2 * (kChunkItems * 200 + (64 << 10));
// Costs for the fair clock, in cheap calls: a window costs one per this many
// items it is expected to answer with. A new or quiet connection's request
// goes ahead of queued ones by up to kFairCredit (a few 1%-of-span windows).
constexpr double kCostItems = 1024;
constexpr int64_t kFairCredit = 64;
// The answer cache keeps up to this share of the answer budget.
constexpr uint64_t kCacheShare = 8;
constexpr char kImmutable[] = "public, max-age=31536000, immutable";
constexpr char kTokenCookie[] = "tt_token";

Reply Answer(int status, std::string body, std::string content_type = "application/json") {
  Reply r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

// Where a call waits in its pool (work_pool.h): lane 0 for cheap calls (a
// few records read: table info, event, tile, memory, windows small enough to
// be sent whole), lane 1 for larger light work; `units` is its cost for the
// fair clock.
struct Cost {
  int lane = 0;
  int64_t units = 1;
};

Cost WindowCost(const Table& t, const Params& p) {
  const double items = WindowItemsEstimate(t, p);
  return {items < kStreamItems ? 0 : 1, 1 + static_cast<int64_t>(items / kCostItems)};
}

// An answer on its way out: status and headers, then a whole body or pieces.
struct Outgoing {
  Reply reply;
  // Its pieces are made in this order on the streamer pool: by the fair
  // clock's tag of its request, light or heavy alike (an answer under way
  // holds budget, and a heavy one its slot, until its last piece is out).
  Priority priority;
  bool gzip = false;  // the client accepts gzip
  std::vector<std::pair<std::string, std::string>> extra;  // Set-Cookie, Cache-Control
  std::unique_ptr<AnswerBudget::Reservation> hold;
  // A heavy call's slot, held until its streamed answer has been sent: heavy
  // answers are made no faster than they go out, so they never fill the
  // budget and leave light calls waiting for room.
  std::shared_ptr<void> heavy_slot;
};

}  // namespace

absl::StatusOr<std::vector<NamedTable>> OpenTables(const std::vector<std::string>& paths,
                                                   const ServeOptions& options) {
  std::vector<fs::path> dirs;
  for (const std::string& arg : paths) {
    const fs::path p(arg);
    std::error_code ec;
    if (!fs::is_directory(p, ec)) return absl::NotFoundError(absl::StrCat(arg, ": not a directory"));
    if (IsTableDir(p)) {
      dirs.push_back(p);
      continue;
    }
    std::vector<fs::path> children;
    for (const fs::directory_entry& e : fs::directory_iterator(p, ec)) {
      if (e.path().extension() == ".tracetable" && IsTableDir(e.path())) children.push_back(e.path());
    }
    if (children.empty()) {
      return absl::NotFoundError(absl::StrCat(arg, ": neither a table nor a folder of *.tracetable tables"));
    }
    std::sort(children.begin(), children.end());
    dirs.insert(dirs.end(), children.begin(), children.end());
  }
  std::vector<NamedTable> out;
  for (const fs::path& d : dirs) {
    Table::Options to;
    to.cache_bytes = options.cache_bytes;
    to.max_open_shards = options.max_open_shards;
    absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(d.string(), to);
    if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat(d.string(), ": ", t.status().message()));
    std::string name = TableName(d);
    const std::string base = name;
    for (int k = 2; std::any_of(out.begin(), out.end(), [&](const NamedTable& n) { return n.name == name; }); ++k) {
      name = absl::StrCat(base, "-", k);
    }
    out.push_back({name, std::move(*t)});
  }
  return out;
}

class Session;

struct Server::Impl {
  // Replaced whole when a changed run is reopened (query/serve/run_reload.h):
  // a request keeps the list it started with, so its table stays open.
  std::shared_ptr<const std::vector<NamedTable>> tables;
  std::mutex tables_mu;
  ServeOptions options;
  std::unique_ptr<net::io_context> ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<net::steady_timer> accept_retry;
  // light and heavy run calls; streamer makes the next piece of streamed
  // answers and never waits for the budget, so answers in flight always
  // finish and return theirs.
  std::unique_ptr<WorkPool> light, heavy, streamer;
  std::unique_ptr<AnswerBudget> budget;
  std::unique_ptr<AnswerCache> cache;
  std::unique_ptr<std::counting_semaphore<>> heavy_slots;
  FairClock fair{kFairCredit};
  std::string bound_host;
  bool check_host = true;

  std::mutex conn_mu;
  int connections = 0;
  absl::flat_hash_map<std::string, int> per_address;

  std::shared_ptr<const std::vector<NamedTable>> Tables() {
    std::lock_guard<std::mutex> lock(tables_mu);
    return tables;
  }

  static const NamedTable* Find(const std::vector<NamedTable>& list, std::string_view name) {
    for (const NamedTable& t : list) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }

  // The list with `seen`'s run reopened if its manifest changed (once, by the
  // first request to notice; the others then find the new one), else as is.
  std::shared_ptr<const std::vector<NamedTable>> Reopened(const std::string& name, const Table* seen) {
    std::lock_guard<std::mutex> lock(tables_mu);
    const NamedTable* now = Find(*tables, name);
    if (now == nullptr || now->table.get() != seen) return tables;
    Table::Options to;
    to.cache_bytes = options.cache_bytes;
    to.max_open_shards = options.max_open_shards;
    absl::StatusOr<std::unique_ptr<Table>> fresh = ReopenChangedRun(*seen, to);
    if (!fresh.ok()) return tables;
    auto next = std::make_shared<std::vector<NamedTable>>(*tables);
    for (NamedTable& t : *next) {
      if (t.name == name) t.table = std::shared_ptr<Table>(std::move(*fresh));
    }
    tables = std::move(next);
    return tables;
  }

  bool Admit(const std::string& address) {
    std::lock_guard<std::mutex> lock(conn_mu);
    int& n = per_address[address];
    if (connections >= options.max_connections || n >= options.max_connections_per_address) {
      if (n == 0) per_address.erase(address);
      return false;
    }
    ++n;
    ++connections;
    return true;
  }

  void Leave(const std::string& address) {
    std::lock_guard<std::mutex> lock(conn_mu);
    --connections;
    auto it = per_address.find(address);
    if (it != per_address.end() && --it->second <= 0) per_address.erase(it);
  }

  void Accept();
};

namespace {

std::string_view Field(const http::request<http::string_body>& req, http::field f) {
  auto it = req.find(f);
  return it == req.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
}

}  // namespace

// One connection, driven on its strand: wait for a request (idle timeout),
// read it whole (request timeout), hand it to a pool, write the answer.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Server::Impl* srv, tcp::socket socket, std::string address)
      : srv_(srv), stream_(std::move(socket)), address_(std::move(address)) {}
  ~Session() { srv_->Leave(address_); }

  void Start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->WaitRequest(); });
  }

 private:
  using Request = http::request<http::string_body>;

  void WaitRequest() {
    if (buffer_.size() > 0) return ReadRequest();  // pipelined: already here
    stream_.expires_after(Seconds(srv_->options.idle_timeout_s));
    stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
      if (ec) return self->Close();
      self->buffer_.commit(n);
      self->ReadRequest();
    });
  }

  void ReadRequest() {
    parser_.emplace();
    parser_->header_limit(kMaxHeadBytes);
    parser_->body_limit(kMaxBodyBytes);
    stream_.expires_after(Seconds(srv_->options.request_timeout_s));
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      self->OnRequest(ec);
    });
  }

  void OnRequest(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::eof ||
        ec == net::error::connection_reset || ec == net::error::operation_aborted) {
      return Close();
    }
    if (ec) {
      keep_alive_ = false;
      version_ = 11;
      const int status = ec == http::error::body_limit ? 413 : ec == http::error::header_limit ? 431 : 400;
      return SendNow(ErrorReply(status, absl::StrCat("bad request: ", ec.message())));
    }
    const Request& req = parser_->get();
    keep_alive_ = req.keep_alive();
    version_ = req.version();
    gzip_ = Field(req, http::field::accept_encoding).find("gzip") != std::string_view::npos;
    if_none_match_ = std::string(Field(req, http::field::if_none_match));
    extra_.clear();
    cache_key_.clear();
    if (req.method() != http::verb::get) {
      Reply r = ErrorReply(405, "only GET is served");
      r.headers.emplace_back("Allow", "GET");
      return SendNow(std::move(r));
    }
    std::string path;
    Params params;
    if (!SplitTarget(std::string_view(req.target().data(), req.target().size()), &path, &params)) {
      return SendNow(ErrorReply(400, "malformed %-escape in the request target"));
    }
    if (srv_->check_host &&
        !HostAllowed(Field(req, http::field::host), srv_->bound_host, srv_->options.allow_hosts)) {
      keep_alive_ = false;
      return SendNow(ErrorReply(403, "Host not allowed: the server answers requests for localhost, its "
                                     "bound address and names given with --allow-host"));
    }
    if (!srv_->options.token.empty() && !Authorized(req, params)) {
      keep_alive_ = false;
      Reply r = ErrorReply(401, "this server needs its token: Authorization: Bearer TOKEN, or ?token=TOKEN once");
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      return SendNow(std::move(r));
    }
    params.erase("token");
    Route(path, std::move(params));
  }

  bool Authorized(const Request& req, const Params& params) {
    const std::string& token = srv_->options.token;
    const std::string_view auth = Field(req, http::field::authorization);
    if (auth.size() > 7 && auth.substr(0, 7) == "Bearer " && SameSecret(auth.substr(7), token)) return true;
    if (SameSecret(CookieValue(Field(req, http::field::cookie), kTokenCookie), token)) return true;
    auto it = params.find("token");
    if (it != params.end() && SameSecret(it->second, token)) {
      // The viewer's first load: its own fetches then carry the cookie.
      extra_.emplace_back("Set-Cookie", absl::StrCat(kTokenCookie, "=", token, "; Path=/; HttpOnly; SameSite=Strict"));
      return true;
    }
    return false;
  }

  // may_wait: a heavy window may wait for an identical one being made
  // (answer_cache.h) instead of making its own.
  void Route(const std::string& path, Params params, bool may_wait = true) {
    if (path == "/healthz") {
      return SendNow(Answer(200, absl::StrCat("{\"ok\":true,\"tables\":", srv_->Tables()->size(), "}\n")));
    }
    if (path == "/favicon.ico") {
      Reply r = Answer(301, "", "text/plain");
      r.headers.emplace_back("Location", "/favicon.svg");
      return SendNow(std::move(r));
    }
    for (size_t i = 0; i < kNumViewerAssets; ++i) {
      const ViewerAsset& a = kViewerAssets[i];
      const bool index = a.path == std::string_view("index.html");
      if (index ? path == "/" : (path.size() == Av(a.path).size() + 1 && path.substr(1) == Av(a.path))) {
        extra_.emplace_back("Cache-Control", "no-cache");
        const std::string_view data(reinterpret_cast<const char*>(a.data), a.size);
        if (index) {
          // The page carries the answers its first view needs (index_page.h).
          Server::Impl* srv = srv_;
          return Work(false, {}, "", nullptr,
                      [srv, data, &a](const Params&) { return Answer(200, IndexPage(data, *srv->Tables()), a.content_type); },
                      std::move(params));
        }
        return SendNow(Answer(200, std::string(data), a.content_type));
      }
    }
    // Held until the next request of this connection: the tables this one
    // reads stay open while its answer is made and streamed.
    tables_ = srv_->Tables();
    auto tables = tables_;
    if (path == "/api/tables") {
      return Work(false, {}, "", nullptr, [tables](const Params&) { return TablesReply(*tables); }, std::move(params));
    }
    if (path == "/data/plugin/profile/data") {
      const bool heavy = IsHeavyCall(nullptr, "xprof", params);
      return Work(heavy, {1, heavy ? 256 : 16}, "xprof", nullptr,
                  [tables](const Params& p) { return XprofReply(*tables, p); }, std::move(params));
    }
    constexpr std::string_view kTables = "/api/tables/";
    if (path.size() > kTables.size() && path.compare(0, kTables.size(), kTables) == 0) {
      const std::string_view rest = std::string_view(path).substr(kTables.size());
      const size_t slash = rest.find('/');
      const std::string name(rest.substr(0, slash));
      const NamedTable* nt = Server::Impl::Find(*tables_, name);
      if (!nt) return SendNow(ErrorReply(404, "no such table"));
      std::optional<Reply> stale = StaleTableReply(*nt->table);
      if (stale) {
        tables_ = srv_->Reopened(name, nt->table.get());
        nt = Server::Impl::Find(*tables_, name);
        stale = StaleTableReply(*nt->table);
      }
      if (stale) return SendNow(std::move(*stale));
      if (slash == std::string_view::npos) {
        return Work(false, {}, "", nullptr, [nt](const Params&) { return TableReply(*nt); }, std::move(params));
      }
      const std::string call(rest.substr(slash + 1));
      const Table* t = nt->table.get();
      if (call == "window") {
        // Classified before `params` moves into Work (arguments are evaluated
        // in no set order: right to left by GCC).
        const bool heavy = IsHeavyCall(t, call, params);
        const Cost cost = WindowCost(*t, params);
        if (heavy) {
          cache_key_ = absl::StrCat(nt->name, "/", t->identity(), "/window?", gzip_ ? "gzip" : "identity");
          for (const auto& [k, v] : params) absl::StrAppend(&cache_key_, "&", k, "=", v);
          if (auto body = srv_->cache->Find(cache_key_)) return SendCached(std::move(body));
          if (may_wait && !LeadOrWait(path, params)) return;
        }
        return Work(heavy, cost, call, t, [t](const Params& p) { return WindowReply(*t, p, true); },
                    std::move(params));
      }
      if (call == "event") {
        return Work(false, {}, call, t, [t](const Params& p) { return EventReply(*t, p); }, std::move(params));
      }
      if (call == "search") {
        return Work(false, {1, 16}, call, t, [t](const Params& p) { return SearchReply(*t, p); }, std::move(params));
      }
      if (call == "stats") {
        return Work(true, {1, 256}, call, t, [t](const Params& p) { return StatsReply(*t, p); }, std::move(params));
      }
      if (call == "tile") {
        AnswerCache* cache = srv_->cache.get();
        return Work(false, {}, call, t, [t, cache](const Params& p) { return TileReply(*t, p, cache); },
                    std::move(params));
      }
      if (call == "memory") {
        return Work(false, {}, call, t, [t](const Params& p) { return MemoryReply(*t, p); }, std::move(params));
      }
      if (call == "flow") {
        return Work(false, {}, call, t, [t](const Params& p) { return FlowReply(*t, p); }, std::move(params));
      }
      return SendNow(ErrorReply(404, absl::StrCat("no call '", call.substr(0, 64),
                                                  "' (window, event, search, stats, tile, memory, flow)")));
    }
    SendNow(ErrorReply(404, "not found"));
  }

  // Runs `handler` on a worker, within the answer budget, then sends.
  template <typename Handler>
  void Work(bool heavy, Cost cost, std::string call, const Table* table, Handler handler, Params params) {
    WorkPool* pool = heavy ? srv_->heavy.get() : srv_->light.get();
    const Priority priority{heavy ? 0 : cost.lane, srv_->fair.Tag(cost.units, &finish_)};
    auto self = shared_from_this();
    auto task = [self, heavy, priority, call = std::move(call), table, handler = std::move(handler),
                 params = std::move(params)]() mutable {
      self->srv_->fair.Started(priority.tag);
      // A client that hung up while its request waited: nobody to answer.
      if (self->PeerClosed()) return;
      AnswerBudget& budget = *self->srv_->budget;
      auto out = std::make_shared<Outgoing>();
      out->gzip = self->gzip_;
      out->priority = {0, priority.tag};
      // Waiting for room (answers in flight finish and return theirs) beats
      // refusing at once; only a client still waiting at the deadline gets 503.
      const auto until = std::chrono::steady_clock::now() + Seconds(self->srv_->options.budget_wait_s);
      AnswerBudget::Verdict v = AnswerBudget::Verdict::kOk;
      if (heavy) {
        std::counting_semaphore<>* slots = self->srv_->heavy_slots.get();
        if (slots->try_acquire_until(until)) {
          out->heavy_slot = std::shared_ptr<void>(nullptr, [slots](void*) { slots->release(); });
        } else {
          v = AnswerBudget::Verdict::kBusy;
        }
      }
      const uint64_t ahead = table ? WorkingBytesEstimate(*table, call, params) : 0;
      if (ahead > 0 && v == AnswerBudget::Verdict::kOk) v = budget.Reserve(ahead, &out->hold, until);
      if (v == AnswerBudget::Verdict::kOk && !self->gone_) {
        out->reply = handler(params);
        Reply& r = out->reply;
        if (!r.chunks && out->gzip && r.body.size() >= 1024) {
          std::string zipped;
          if (Gzip(r.body, &zipped)) {
            r.body = std::move(zipped);
            r.headers.emplace_back("Content-Encoding", "gzip");
          }
        }
        if (!r.chunks) out->heavy_slot.reset();
        const uint64_t need = r.chunks ? r.chunks->held_bytes() + kStreamBufferBytes : r.body.size();
        v = out->hold ? out->hold->Resize(need, until) : budget.Reserve(need, &out->hold, until);
      }
      if (v != AnswerBudget::Verdict::kOk) {
        out->hold.reset();
        out->heavy_slot.reset();
        const uint64_t mb = budget.limit() >> 20;
        out->reply = v == AnswerBudget::Verdict::kTooLarge
                         ? ErrorReply(413, absl::StrCat("this answer needs more memory than the server's whole answer "
                                                        "budget (", mb, " MB, --max-answer-mb); ask for a smaller "
                                                        "window, a coarser resolution or fewer tracks"))
                         : ErrorReply(503, absl::StrCat("the server's answer budget (", mb,
                                                        " MB) is in use by other answers; try again"));
        if (v == AnswerBudget::Verdict::kBusy) out->reply.headers.emplace_back("Retry-After", "1");
      }
      net::post(self->stream_.get_executor(), [self, out]() mutable { self->Send(std::move(out)); });
    };
    if (!pool->TryPost(std::move(task), priority)) {
      Reply r = ErrorReply(503, "the server is busy (its request queue is full); try again");
      r.headers.emplace_back("Retry-After", "1");
      SendNow(std::move(r));
    }
  }

  void SendNow(Reply r) {
    auto out = std::make_shared<Outgoing>();
    out->gzip = gzip_;
    if (out->gzip && r.body.size() >= 1024) {
      std::string zipped;
      if (Gzip(r.body, &zipped)) {
        r.body = std::move(zipped);
        r.headers.emplace_back("Content-Encoding", "gzip");
      }
    }
    out->reply = std::move(r);
    Send(std::move(out));
  }

  // True when no identical answer is being made (this one leads: flight_).
  // Else asks again once that one is kept (or has failed), or after
  // --budget-wait, whichever comes first; then it makes its own.
  bool LeadOrWait(const std::string& path, const Params& params) {
    auto timer = std::make_shared<net::steady_timer>(stream_.get_executor());
    auto once = std::make_shared<std::atomic<bool>>(false);
    auto again = [self = shared_from_this(), timer, once, path, params] {
      if (once->exchange(true)) return;
      timer->cancel();
      self->Route(path, params, false);
    };
    flight_ = srv_->cache->Lead(cache_key_, [again, ex = stream_.get_executor()] { net::post(ex, again); });
    if (flight_) return true;
    timer->expires_after(Seconds(srv_->options.budget_wait_s));
    timer->async_wait([again](beast::error_code) { again(); });
    return false;
  }

  // A heavy window's answer as sent before (answer_cache.h), from memory.
  void SendCached(std::shared_ptr<const std::string> body) {
    Reply r = Answer(200, "");
    if (gzip_) r.headers.emplace_back("Content-Encoding", "gzip");
    http::response_header<> head;
    Head(r, &head);
    auto res = std::make_shared<http::response<http::span_body<const char>>>(std::move(head));
    res->body() = beast::span<const char>(body->data(), body->size());
    res->prepare_payload();
    stream_.expires_after(Seconds(srv_->options.write_timeout_s));
    http::async_write(stream_, *res, [self = shared_from_this(), res, body](beast::error_code ec, size_t) {
      self->AfterAnswer(ec);
    });
  }

  // Status and headers; true when the answer is a 304 (no body).
  bool Head(const Reply& r, http::response_header<>* h) {
    h->version(version_);
    h->result(static_cast<unsigned>(r.status));
    h->set(http::field::server, "tracetable");
    h->set(http::field::content_type, r.content_type);
    h->set(http::field::vary, "Accept-Encoding");
    bool immutable = false, not_modified = false;
    for (const auto& [name, value] : r.headers) {
      h->insert(name, value);
      if (name == "ETag") {
        immutable = true;
        not_modified = if_none_match_ == value;
      }
    }
    bool cache_set = false;
    for (const auto& [name, value] : extra_) {
      h->insert(name, value);
      cache_set |= name == "Cache-Control";
    }
    if (!cache_set) h->set(http::field::cache_control, immutable ? kImmutable : "no-store");
    if (not_modified) h->result(http::status::not_modified);
    h->set(http::field::connection, keep_alive_ ? "keep-alive" : "close");
    return not_modified;
  }

  void Send(std::shared_ptr<Outgoing> out) {
    if (gone_) return;
    http::response_header<> head;
    const bool not_modified = Head(out->reply, &head);
    if (out->reply.chunks && !not_modified) return StartStream(std::move(out), std::move(head));
    auto res = std::make_shared<http::response<http::string_body>>(std::move(head));
    if (!not_modified) res->body() = std::move(out->reply.body);
    res->prepare_payload();
    stream_.expires_after(Seconds(srv_->options.write_timeout_s));
    http::async_write(stream_, *res, [self = shared_from_this(), res, out](beast::error_code ec, size_t) {
      self->AfterAnswer(ec);
    });
  }

  void AfterAnswer(beast::error_code ec) {
    flight_.reset();
    if (ec) {
      gone_ = true;
      return Close();
    }
    if (!keep_alive_) return Close();
    WaitRequest();
  }

  // Chunked transfer: the header, then one piece at a time, each produced on
  // the streamer pool after the previous one has been handed to the socket,
  // so a slow reader holds no thread and at most two pieces.
  void StartStream(std::shared_ptr<Outgoing> out, http::response_header<> head) {
    if (out->gzip) {
      head.set(http::field::content_encoding, "gzip");
      zip_ = std::make_unique<GzipStream>();
    }
    streaming_ = std::move(out);
    recording_ = !cache_key_.empty();
    recorded_.clear();
    auto res = std::make_shared<http::response<http::empty_body>>(std::move(head));
    res->chunked(true);
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*res);
    stream_.expires_after(Seconds(srv_->options.write_timeout_s));
    http::async_write_header(stream_, *sr, [self = shared_from_this(), res, sr](beast::error_code ec, size_t) {
      if (ec) return self->StreamFailed();
      self->NextPiece();
    });
  }

  void NextPiece() {
    auto self = shared_from_this();
    const Priority priority = streaming_->priority;
    const bool posted = srv_->streamer->Post([self] {
      if (self->gone_) return;
      auto piece = std::make_shared<std::string>();
      std::string raw;
      Outgoing& out = *self->streaming_;
      const bool more = out.reply.chunks->Next(&raw);
      if (self->zip_) {
        if (!self->zip_->Add(raw, !more, piece.get())) self->gone_ = true;
      } else {
        *piece = std::move(raw);
      }
      if (self->recording_) {
        if (self->recorded_.size() + piece->size() <= self->srv_->cache->max_answer_bytes()) {
          self->recorded_.append(*piece);
        } else {
          self->recording_ = false;
          std::string().swap(self->recorded_);
        }
      }
      if (out.hold) out.hold->Resize(out.reply.chunks->held_bytes() + kStreamBufferBytes + self->recorded_.size());
      net::post(self->stream_.get_executor(), [self, piece, more] { self->WritePiece(piece, more); });
    }, priority);
    if (!posted) StreamFailed();
  }

  void WritePiece(std::shared_ptr<std::string> piece, bool more) {
    if (gone_) return StreamFailed();
    stream_.expires_after(Seconds(srv_->options.write_timeout_s));
    auto next = [self = shared_from_this(), piece, more](beast::error_code ec, size_t) {
      if (ec) return self->StreamFailed();
      if (more) return self->NextPiece();
      self->FinishStream();
    };
    if (piece->empty()) {
      if (more) return NextPiece();
      return net::async_write(stream_, http::make_chunk_last(), std::move(next));
    }
    if (!more) {
      // The last piece and the terminating chunk in one write.
      auto both = [self = shared_from_this(), piece](beast::error_code ec, size_t) {
        if (ec) return self->StreamFailed();
        net::async_write(self->stream_, http::make_chunk_last(),
                         [self](beast::error_code ec2, size_t) {
                           if (ec2) return self->StreamFailed();
                           self->FinishStream();
                         });
      };
      return net::async_write(stream_, http::make_chunk(net::buffer(*piece)), std::move(both));
    }
    net::async_write(stream_, http::make_chunk(net::buffer(*piece)), std::move(next));
  }

  void FinishStream() {
    if (recording_) srv_->cache->Put(cache_key_, std::move(recorded_));
    StopRecording();
    streaming_.reset();  // returns its budget
    zip_.reset();
    AfterAnswer({});
  }

  // The client went away or stopped reading: stop producing, free the answer.
  void StreamFailed() {
    gone_ = true;
    StopRecording();
    flight_.reset();
    streaming_.reset();
    zip_.reset();
    Close();
  }

  void StopRecording() {
    recording_ = false;
    std::string().swap(recorded_);
  }

  // Whether the client has closed its end (read side at end of stream). Only
  // called while no read is pending, so nothing else touches the socket.
  bool PeerClosed() {
    char c;
    const ssize_t n = recv(stream_.socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
  }

  void Close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  Server::Impl* srv_;
  beast::tcp_stream stream_;
  std::string address_;
  beast::flat_buffer buffer_{kMaxHeadBytes + kMaxBodyBytes};
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = true, gzip_ = false;
  unsigned version_ = 11;
  std::string if_none_match_;
  std::vector<std::pair<std::string, std::string>> extra_;
  std::atomic<bool> gone_{false};
  int64_t finish_ = FairClock::kNew;  // fair_clock.h
  // A heavy window's answer being sent is copied here (up to the cache's
  // limit per answer) and kept in the answer cache once whole.
  std::string cache_key_;
  std::shared_ptr<const std::vector<NamedTable>> tables_;  // what the current request reads
  std::shared_ptr<void> flight_;  // this answer is being made for others too
  bool recording_ = false;
  std::string recorded_;
  std::shared_ptr<Outgoing> streaming_;
  std::unique_ptr<GzipStream> zip_;
};

void Server::Impl::Accept() {
  acceptor->async_accept(net::make_strand(*ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor->is_open()) return;
    if (ec) {
      // Out of file descriptors (or similar): wait instead of spinning; the
      // pending connections stay in the backlog.
      accept_retry->expires_after(std::chrono::milliseconds(50));
      accept_retry->async_wait([this](beast::error_code e) {
        if (!e) Accept();
      });
      return;
    }
    beast::error_code aec;
    const tcp::endpoint peer = socket.remote_endpoint(aec);
    std::string address = aec ? std::string("?") : peer.address().to_string();
    if (!Admit(address)) {
      // Over a cap: a short answer (the socket's buffer is empty, so this
      // never blocks), then the connection is closed.
      static constexpr std::string_view kRefused =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 45\r\n"
          "Connection: close\r\nRetry-After: 1\r\n\r\n{\"error\":\"too many connections, try again\"}\n\n";
      socket.non_blocking(true, aec);
      socket.write_some(net::buffer(kRefused.data(), kRefused.size()), aec);
      socket.shutdown(tcp::socket::shutdown_send, aec);
      socket.close(aec);
    } else {
      socket.set_option(tcp::no_delay(true), aec);
      std::make_shared<Session>(this, std::move(socket), std::move(address))->Start();
    }
    Accept();
  });
}

Server::Server(std::vector<NamedTable> tables, const ServeOptions& options) : impl_(new Impl) {
  impl_->tables = std::make_shared<const std::vector<NamedTable>>(std::move(tables));
  impl_->options = options;
  ServeOptions& o = impl_->options;
  // Light calls mostly use the CPU: more workers than cores only split it
  // (with 4 on a 2-core machine a heavy answer under way got ~1/9 of it).
  if (o.threads <= 0) o.threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  o.heavy_threads = std::max(1, o.heavy_threads);
  o.io_threads = std::max(1, o.io_threads);
  impl_->ioc = std::make_unique<net::io_context>(o.io_threads);
  impl_->acceptor = std::make_unique<tcp::acceptor>(*impl_->ioc);
  impl_->accept_retry = std::make_unique<net::steady_timer>(*impl_->ioc);
  impl_->light = std::make_unique<WorkPool>(o.threads, o.max_queued);
  impl_->heavy = std::make_unique<WorkPool>(o.heavy_threads, std::max<size_t>(8, o.max_queued / 8));
  impl_->streamer = std::make_unique<WorkPool>(2, SIZE_MAX);
  impl_->budget = std::make_unique<AnswerBudget>(o.max_answer_bytes);
  impl_->cache = std::make_unique<AnswerCache>(impl_->budget.get(), o.max_answer_bytes / kCacheShare);
  impl_->heavy_slots = std::make_unique<std::counting_semaphore<>>(o.heavy_threads);
}

Server::~Server() {
  Stop();
  // Workers hold sessions; sessions touch the io context and the counters.
  impl_->light->Stop();
  impl_->heavy->Stop();
  impl_->streamer->Stop();
  impl_->accept_retry.reset();
  impl_->acceptor.reset();
  impl_->ioc.reset();
}

absl::StatusOr<int> Server::Bind(const std::string& host, int port) {
  beast::error_code ec;
  net::ip::address address = net::ip::make_address(host, ec);
  if (ec) {
    tcp::resolver resolver(*impl_->ioc);
    auto found = resolver.resolve(host, "", ec);
    if (ec || found.empty()) return absl::UnavailableError(absl::StrCat("cannot resolve ", host));
    address = found.begin()->endpoint().address();
  }
  const tcp::endpoint ep(address, static_cast<uint16_t>(port));
  tcp::acceptor& a = *impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    a.close(ec);
    return absl::UnavailableError(absl::StrCat("cannot bind ", host, ":", port, " (in use, or not an address of this machine?)"));
  }
  impl_->bound_host = host;
  impl_->check_host = address.is_loopback();
  return static_cast<int>(a.local_endpoint().port());
}

bool Server::checks_host() const { return impl_->check_host; }

void Server::Run() {
  impl_->Accept();
  std::vector<std::thread> io;
  for (int i = 1; i < impl_->options.io_threads; ++i) io.emplace_back([this] { impl_->ioc->run(); });
  impl_->ioc->run();
  for (std::thread& t : io) t.join();
}

void Server::Stop() {
  if (impl_ && impl_->ioc) impl_->ioc->stop();
}

std::shared_ptr<const std::vector<NamedTable>> Server::tables() const { return impl_->Tables(); }

Server::Load Server::load() const { return {impl_->light->load(), impl_->heavy->load()}; }

}  // namespace tracetable::serve
