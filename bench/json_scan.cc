// tt_json_scan: the floor an ingest is compared with. One thread, simdjson
// On-Demand, reads every event's "ts" of a Chrome trace (object or array
// form) already in memory, the least work that still touches every byte.
// Prints one JSON line: bytes, events, wall and CPU seconds of the scan
// (the file is read into memory first, not timed).
//
// The scan is run twice on one parser and the second pass is the floor.
// On-Demand indexes the whole document at once (~1.2 bytes of index per
// input byte), so a first pass over a 1 GB trace spends most of its time
// having the kernel hand out that index's pages — on this project's VM 8 s
// of system time against 3 s of user time for gen 10M (2026-11-28), a cost
// of simdjson's whole-document index that a streaming reader never pays.
// The first pass is printed too ("cold_*").
#include <simdjson.h>

#include <cstdio>
#include <ctime>

namespace {

double Now(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct Pass {
  simdjson::error_code error = simdjson::SUCCESS;
  unsigned long long events = 0;
  double ts_sum = 0, wall_s = 0, cpu_s = 0;
};

Pass Scan(simdjson::ondemand::parser& parser, const simdjson::padded_string& text) {
  Pass p;
  const double wall0 = Now(CLOCK_MONOTONIC), cpu0 = Now(CLOCK_PROCESS_CPUTIME_ID);
  simdjson::ondemand::document doc;
  simdjson::ondemand::array events;
  simdjson::ondemand::json_type type;
  if ((p.error = parser.iterate(text).get(doc))) return p;
  if ((p.error = doc.type().get(type))) return p;
  if (type == simdjson::ondemand::json_type::array) {
    p.error = doc.get_array().get(events);
  } else {
    p.error = doc["traceEvents"].get_array().get(events);
  }
  if (p.error) return p;
  for (auto ev : events) {
    simdjson::ondemand::object obj;
    if ((p.error = ev.get_object().get(obj))) return p;
    double ts = 0;
    if (!obj["ts"].get_double().get(ts)) p.ts_sum += ts;
    ++p.events;
  }
  p.wall_s = Now(CLOCK_MONOTONIC) - wall0;
  p.cpu_s = Now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  return p;
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
  simdjson::ondemand::parser parser;
  const Pass cold = Scan(parser, text);
  const Pass warm = cold.error ? cold : Scan(parser, text);
  if (warm.error) {
    std::fprintf(stderr, "%s: %s\n", argv[1], simdjson::error_message(warm.error));
    return 1;
  }
  if (warm.events != cold.events || warm.ts_sum != cold.ts_sum) {
    std::fprintf(stderr, "%s: the two passes disagree\n", argv[1]);
    return 1;
  }
  std::printf("{\"bytes\": %zu, \"events\": %llu, \"wall_s\": %.4f, \"cpu_s\": %.4f, \"ts_sum\": %.0f, "
              "\"cold_wall_s\": %.4f, \"cold_cpu_s\": %.4f}\n",
              text.size(), warm.events, warm.wall_s, warm.cpu_s, warm.ts_sum, cold.wall_s, cold.cpu_s);
  return 0;
}
