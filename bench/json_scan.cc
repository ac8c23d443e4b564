// tt_json_scan: the floor an ingest is compared with. One thread, simdjson
// On-Demand, reads every event's "ts" of a Chrome trace (object or array
// form) already in memory, the least work that still touches every byte.
// Prints one JSON line: bytes, events, wall and CPU seconds of the scan
// (the file is read into memory first, not timed).
#include <simdjson.h>

#include <cstdio>
#include <ctime>

namespace {

double Now(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tt_json_scan TRACE.json\n");
    return 2;
  }
  simdjson::padded_string text;
  if (auto e = simdjson::padded_string::load(argv[1]).get(text)) {
    std::fprintf(stderr, "%s: %s\n", argv[1], simdjson::error_message(e));
    return 1;
  }
  const double wall0 = Now(CLOCK_MONOTONIC), cpu0 = Now(CLOCK_PROCESS_CPUTIME_ID);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  simdjson::ondemand::array events;
  uint64_t n = 0;
  double sum = 0;
  auto fail = [&](simdjson::error_code e) {
    std::fprintf(stderr, "%s: %s\n", argv[1], simdjson::error_message(e));
    return 1;
  };
  if (auto e = parser.iterate(text).get(doc)) return fail(e);
  simdjson::ondemand::json_type type;
  if (auto e = doc.type().get(type)) return fail(e);
  if (type == simdjson::ondemand::json_type::array) {
    if (auto e = doc.get_array().get(events)) return fail(e);
  } else if (auto e = doc["traceEvents"].get_array().get(events)) {
    return fail(e);
  }
  for (auto ev : events) {
    simdjson::ondemand::object obj;
    if (auto e = ev.get_object().get(obj)) return fail(e);
    double ts = 0;
    if (!obj["ts"].get_double().get(ts)) sum += ts;
    ++n;
  }
  const double wall = Now(CLOCK_MONOTONIC) - wall0, cpu = Now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  std::printf("{\"bytes\": %zu, \"events\": %llu, \"wall_s\": %.4f, \"cpu_s\": %.4f, \"ts_sum\": %.0f}\n",
              text.size(), static_cast<unsigned long long>(n), wall, cpu, sum);
  return 0;
}
