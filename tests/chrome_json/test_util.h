// Helpers for the Chrome JSON reader tests: temporary files and reading a
// JSON text through ReadChromeJson into a CollectingSink.
#ifndef TRACETABLE_TESTS_CHROME_JSON_TEST_UTIL_H_
#define TRACETABLE_TESTS_CHROME_JSON_TEST_UTIL_H_

#include <zlib.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "ingest/chrome_json/reader.h"
#include "tests/chrome_json/collecting_sink.h"

namespace tracetable::testing_sink {

// A fresh file path under the test temp dir.
inline std::string TempPath(std::string_view name) {
  static std::atomic<int> counter{0};
  std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "tt_chrome_json";
  std::filesystem::create_directories(dir);
  // ctest runs each test in its own process, in parallel: the pid keeps
  // their files apart.
  return (dir / (std::to_string(getpid()) + "_" + std::to_string(counter++) + "_" +
                 std::string(name)))
      .string();
}

inline std::string WriteFile(std::string_view name, std::string_view content) {
  std::string path = TempPath(name);
  std::ofstream out(path, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  return path;
}

// gzip-compresses `content` (one member).
inline std::string Gzip(std::string_view content) {
  z_stream zs{};
  deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
               Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, content.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(content.data()));
  zs.avail_in = static_cast<uInt>(content.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline std::string Gunzip(const std::string& data) {
  z_stream zs{};
  inflateInit2(&zs, 16 + MAX_WBITS);
  std::string out;
  char buf[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (rc == Z_STREAM_END && zs.avail_in > 0) {
      inflateReset(&zs);
      rc = Z_OK;
    }
  }
  inflateEnd(&zs);
  return out;
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Writes `json` to a file and reads it. The file's path is in sink->path.
inline absl::Status ReadText(std::string_view json, CollectingSink* sink,
                             std::string_view name = "trace.json") {
  return ReadChromeJson(WriteFile(name, json), "", sink);
}

}  // namespace tracetable::testing_sink

#endif  // TRACETABLE_TESTS_CHROME_JSON_TEST_UTIL_H_
