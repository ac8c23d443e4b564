#include "query/serve/server.h"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <thread>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "httplib.h"
#include "query/serve/api.h"
#include "query/serve/memory_api.h"
#include "query/serve/tiles_api.h"
#include "query/serve/viewer_assets.h"
#include "zlib.h"

namespace tracetable::serve {
namespace fs = std::filesystem;

namespace {

bool IsTableDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec) && fs::exists(p / "CURRENT", ec);
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

// gzip at level 1: answers are large JSON (often tens of MB at a zoomed-out
// window); level 1 is twice as fast as zlib's default for ~25% more bytes.
bool Gzip(std::string_view in, std::string* out) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  out->resize(deflateBound(&z, in.size()) + 32);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out->data());
  z.avail_out = static_cast<uInt>(out->size());
  const int rc = deflate(&z, Z_FINISH);
  out->resize(z.total_out);
  deflateEnd(&z);
  return rc == Z_STREAM_END;
}

constexpr char kGzipHeader[] = "X-Tracetable-Gzip";

// Sets the body, gzip-compressed when the request accepted gzip.
void SetBody(const httplib::Request& req, httplib::Response& res, std::string_view body,
             const char* type) {
  res.set_header("Vary", "Accept-Encoding");
  std::string zipped;
  if (body.size() >= 1024 && body.size() < (1ull << 31) && req.has_header(kGzipHeader) &&
      Gzip(body, &zipped)) {
    res.set_header("Content-Encoding", "gzip");
    res.set_content(std::move(zipped), type);
    return;
  }
  res.set_content(body.data(), body.size(), type);
}

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

struct Server::Impl {
  std::vector<NamedTable> tables;
  ServeOptions options;
  httplib::Server http;

  const NamedTable* Find(const std::string& name) const {
    for (const NamedTable& t : tables) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }

  static void Send(const httplib::Request& req, httplib::Response& res, const Reply& r) {
    res.status = r.status;
    bool immutable = false;
    for (const auto& [name, value] : r.headers) {
      res.set_header(name, value);
      if (name == "ETag") {
        immutable = true;
        if (req.get_header_value("If-None-Match") == value) {
          res.status = 304;
          res.set_header("Cache-Control", "public, max-age=31536000, immutable");
          return;
        }
      }
    }
    res.set_header("Cache-Control", immutable ? "public, max-age=31536000, immutable" : "no-store");
    SetBody(req, res, r.body, r.content_type.c_str());
  }

  void Routes() {
    // Compression is ours (SetBody): httplib would prefer brotli when a
    // browser offers it, at a quality that takes seconds per megabyte, or
    // gzip at level 6. Hide Accept-Encoding from it and remember gzip.
    http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response&) {
      auto& headers = const_cast<httplib::Request&>(req).headers;  // the request is ours to edit
      headers.erase(kGzipHeader);
      auto it = headers.find("Accept-Encoding");
      if (it != headers.end()) {
        const bool gzip = it->second.find("gzip") != std::string::npos;
        headers.erase(it);
        if (gzip) headers.emplace(kGzipHeader, "1");
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    for (size_t i = 0; i < kNumViewerAssets; ++i) {
      const ViewerAsset& a = kViewerAssets[i];
      const std::string route = a.path == std::string_view("index.html") ? "/" : absl::StrCat("/", Av(a.path));
      http.Get(route, [a](const httplib::Request& req, httplib::Response& res) {
        res.set_header("Cache-Control", "no-cache");
        SetBody(req, res, std::string_view(reinterpret_cast<const char*>(a.data), a.size), a.content_type);
      });
    }
    http.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& res) {
      res.status = 301;
      res.set_header("Location", "/favicon.svg");
    });
    http.Get("/healthz", [this](const httplib::Request& req, httplib::Response& res) {
      Send(req, res, Reply{200, absl::StrCat("{\"ok\":true,\"tables\":", tables.size(), "}\n")});
    });
    http.Get("/api/tables", [this](const httplib::Request& req, httplib::Response& res) {
      Send(req, res, TablesReply(tables));
    });
    http.Get(R"(/api/tables/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const NamedTable* t = Find(req.matches[1]);
      if (!t) return Send(req, res, ErrorReply(404, "no such table"));
      Send(req, res, TableReply(*t));
    });
    http.Get(R"(/api/tables/([^/]+)/([a-z]+))", [this](const httplib::Request& req,
                                                        httplib::Response& res) {
      const NamedTable* nt = Find(req.matches[1]);
      if (!nt) return Send(req, res, ErrorReply(404, "no such table"));
      const std::string call = req.matches[2];
      const Table& t = *nt->table;
      if (call == "window") return Send(req, res, WindowReply(t, req.params));
      if (call == "event") return Send(req, res, EventReply(t, req.params));
      if (call == "search") return Send(req, res, SearchReply(t, req.params));
      if (call == "stats") return Send(req, res, StatsReply(t, req.params));
      if (call == "tile") return Send(req, res, TileReply(t, req.params));
      if (call == "memory") return Send(req, res, MemoryReply(t, req.params));
      Send(req, res, ErrorReply(404, absl::StrCat("no call '", call, "' (window, event, search, stats, tile, memory)")));
    });
    http.Get("/data/plugin/profile/data", [this](const httplib::Request& req, httplib::Response& res) {
      Send(req, res, XprofReply(tables, req.params));
    });
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (res.body.empty()) {
        Send(req, res, ErrorReply(res.status, res.status == 404 ? "not found" : "bad request"));
      }
    });
    http.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "internal error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      Send(req, res, ErrorReply(500, what));
    });
  }
};

Server::Server(std::vector<NamedTable> tables, const ServeOptions& options) : impl_(new Impl) {
  impl_->tables = std::move(tables);
  impl_->options = options;
  int threads = options.threads;
  if (threads <= 0) threads = static_cast<int>(std::max(16u, 2 * std::thread::hardware_concurrency()));
  impl_->http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  impl_->http.set_payload_max_length(64 << 10);
  // Headers and body go out in separate writes; with Nagle's algorithm the
  // body then waits for the client's delayed ACK (~40 ms per small answer).
  impl_->http.set_tcp_nodelay(true);
  impl_->http.set_keep_alive_max_count(1000);
  impl_->http.set_keep_alive_timeout(2);
  impl_->Routes();
}

Server::~Server() { Stop(); }

absl::StatusOr<int> Server::Bind(const std::string& host, int port) {
  if (port == 0) {
    const int p = impl_->http.bind_to_any_port(host);
    if (p < 0) return absl::UnavailableError(absl::StrCat("cannot bind ", host));
    return p;
  }
  if (!impl_->http.bind_to_port(host, port)) {
    return absl::UnavailableError(absl::StrCat("cannot bind ", host, ":", port, " (in use, or not an address of this machine?)"));
  }
  return port;
}

void Server::Run() { impl_->http.listen_after_bind(); }

void Server::Stop() {
  if (impl_) impl_->http.stop();
}

const std::vector<NamedTable>& Server::tables() const { return impl_->tables; }

}  // namespace tracetable::serve
