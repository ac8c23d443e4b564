#include "query/export.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "format/json_text.h"
#include "query/input_fields.h"
#include "query/trace_json.h"
#include "query/window.h"

namespace tracetable {
namespace {

// Writes plain or gzip output; the file appears under its name only when
// complete.
class OutputFile {
 public:
  absl::Status Open(const std::string& path) {
    path_ = path;
    temp_ = path + ".tmp";
    gzip_ = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    if (gzip_) {
      gz_ = gzopen(temp_.c_str(), "wb6");
      if (!gz_) return absl::InternalError(absl::StrCat("cannot create ", temp_));
    } else {
      f_ = std::fopen(temp_.c_str(), "wb");
      if (!f_) return absl::InternalError(absl::StrCat("cannot create ", temp_));
    }
    return absl::OkStatus();
  }
  bool Write(const std::string& s) {
    if (s.empty()) return true;
    if (gzip_) return gzwrite(gz_, s.data(), static_cast<unsigned>(s.size())) == static_cast<int>(s.size());
    return std::fwrite(s.data(), 1, s.size(), f_) == s.size();
  }
  absl::Status Close() {
    bool ok = gzip_ ? gzclose(gz_) == Z_OK : std::fclose(f_) == 0;
    gz_ = nullptr;
    f_ = nullptr;
    if (!ok) {
      std::remove(temp_.c_str());
      return absl::InternalError(absl::StrCat("cannot write ", temp_));
    }
    std::error_code ec;
    std::filesystem::rename(temp_, path_, ec);
    if (ec) {
      std::remove(temp_.c_str());
      return absl::InternalError(absl::StrCat("cannot rename to ", path_, ": ", ec.message()));
    }
    return absl::OkStatus();
  }
  ~OutputFile() {
    if (gz_) gzclose(gz_);
    if (f_) std::fclose(f_);
    if (gz_ || f_) std::remove(temp_.c_str());
  }

 private:
  std::string path_, temp_;
  bool gzip_ = false;
  gzFile gz_ = nullptr;
  std::FILE* f_ = nullptr;
};

// An async slice goes back as the b/e pair it was read from, its match key
// as the id (a re-ingest keys it again, one to one), so that it nests
// again as it did (an incomplete one ends where the table ended, as an
// "X" would); an instant of an async track as an "n" of its key.
absl::Status AppendAsyncEvent(const Table& t, const WindowItem& item, std::string* out) {
  const TileRow& r = item.row;
  const proto::Track& tr = t.resources().tracks(item.track);
  const bool instant = r.kind == EventKind::kInstant;
  for (const char* ph : {instant ? "n" : "b", "e"}) {
    if (ph[0] == 'e') {
      if (instant) break;
      out->append(",\n");
    }
    absl::StrAppend(out, "{\"ph\":\"", ph, "\",\"pid\":");
    AppendPid(t, tr.process(), out);
    out->append(",\"tid\":");
    AppendTid(t, item.track, out);
    out->append(",\"ts\":");
    AppendAbsoluteMicros(t, ph[0] == 'b' ? r.ts : r.ts + r.dur, out);
    out->append(",\"name\":");
    AppendJsonString(out, t.String(r.name));
    out->append(",\"cat\":");
    AppendJsonString(out, t.String(r.cat));
    out->append(",\"id\":");
    AppendJsonString(out, t.FlowIdText(r.flow_id));
    if (ph[0] != 'e' && (r.flags & kFlagHasArgs)) {
      absl::StatusOr<std::string> args = t.Args(r.id);
      if (!args.ok()) {
        return absl::DataLossError(absl::StrCat("corrupt table ", t.path(), ": ", args.status().message(),
                                                " though its row says it has"));
      }
      absl::StrAppend(out, ",\"args\":", *args);
    }
    out->push_back('}');
  }
  return absl::OkStatus();
}

// Streams every event of one track whose start is in [start, end], chunk by
// chunk so memory stays bounded.
absl::Status ExportTrack(const Table& t, uint32_t track, int64_t start, int64_t end,
                         OutputFile* out, uint64_t* count, bool* first) {
  if (end < start) return absl::OkStatus();
  // In 128 bits: a span near the int64 range must neither overflow nor
  // wrap around into a loop that never ends.
  const __int128 span = static_cast<__int128>(end) - start;
  const __int128 chunk = std::max<__int128>(span / 256 + 1, 1'000'000);
  for (__int128 a128 = start; a128 <= end; a128 += chunk) {
    const int64_t a = static_cast<int64_t>(a128);
    const int64_t b = static_cast<int64_t>(std::min<__int128>(end, a128 + chunk - 1));
    WindowRequest req;
    req.start = a;
    req.end = b;
    req.resolution = 0;
    req.tracks = {track};
    absl::StatusOr<WindowResult> res = QueryWindow(t, req);
    if (!res.ok()) return res.status();
    std::string text;
    for (const WindowItem& item : res->items) {
      if (item.row.ts < a || item.row.ts > b) continue;  // once, in its start chunk
      if (!*first) text += ",\n";
      *first = false;
      if (!item.summary && t.resources().tracks(track).kind() == proto::Track::ASYNC &&
          (item.row.kind == EventKind::kSlice || item.row.kind == EventKind::kInstant)) {
        if (absl::Status s = AppendAsyncEvent(t, item, &text); !s.ok()) return s;
        ++*count;
        continue;
      }
      if (absl::Status s = AppendItemJson(t, item, /*include_args=*/true, &text); !s.ok()) return s;
      text.resize(text.size() - 2);  // AppendItemJson ends with ",\n"
      ++*count;
    }
    if (!out->Write(text)) return absl::InternalError("write failed (disk full?)");
    if (b == end) break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint64_t> ExportChromeTrace(const Table& t, int64_t start, int64_t end,
                                           const std::string& path) {
  OutputFile out;
  if (absl::Status s = out.Open(path); !s.ok()) return s;
  std::vector<uint32_t> tracks;
  // Derived tracks come back when the export is ingested again.
  for (int i = 0; i < t.resources().tracks_size(); ++i) {
    if (!t.resources().tracks(i).derived()) tracks.push_back(i);
  }
  std::string head = "{\"displayTimeUnit\":\"ns\",";
  AppendTopLevelFields(t, &head);
  head += "\"traceEvents\":[\n";
  AppendMetadataEvents(t, tracks, &head, /*async_threads=*/false);
  // Events are written with a leading comma after the first element.
  bool first = head.size() < 2 || head.substr(head.size() - 2) != ",\n";
  if (!first) head.resize(head.size() - 2);
  uint64_t count = 0;
  if (!out.Write(head)) return absl::InternalError("write failed (disk full?)");
  for (uint32_t track : tracks) {
    if (absl::Status s = ExportTrack(t, track, start, end, &out, &count, &first); !s.ok()) return s;
  }
  if (!out.Write("\n]}\n")) return absl::InternalError("write failed (disk full?)");
  if (absl::Status s = out.Close(); !s.ok()) return s;
  return count;
}

}  // namespace tracetable
