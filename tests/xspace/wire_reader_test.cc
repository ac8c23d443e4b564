// The hand-written plane reader (ingest/xspace/wire_reader.h) against the
// generated XPlane parser, the reference: on random planes written with wire
// oddities (duplicate and reordered fields, oneof overrides, unknown fields
// and groups, wrong wire types, non-minimal varints, invalid UTF-8) and on
// byte-level mutants of them, both must accept or reject the same bytes and,
// when they accept, give the same values.
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/stubs/logging.h"
#include "gtest/gtest.h"
#include "format/json_text.h"
#include "ingest/xspace/stat_json.h"
#include "ingest/xspace/wire_reader.h"
#include "ingest/xspace/xplane.pb.h"

namespace tracetable::xspace_wire {
namespace {

namespace xs = tracetable::xspace;

// Writes protobuf wire format by hand, with optional oddities.
class Writer {
 public:
  explicit Writer(std::mt19937_64* rng) : rng_(*rng) {}

  // A varint, padded with `pad` redundant 0x80 bytes while under max_bytes.
  static void Varint(std::string* out, uint64_t v, int max_bytes, int pad) {
    std::string b;
    do {
      b.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    } while (v != 0);
    for (; pad > 0 && static_cast<int>(b.size()) < max_bytes; --pad) b.push_back('\x80');
    b.back() = static_cast<char>(b.back() & 0x7f);
    out->append(b);
  }
  void Tag(std::string* out, uint32_t field, uint32_t wire) {
    Varint(out, field << 3 | wire, 5, Chance(20) ? Uniform(0, 3) : 0);
  }
  void VarintField(std::string* out, uint32_t field, uint64_t v) {
    Tag(out, field, 0);
    Varint(out, v, 10, Chance(20) ? Uniform(0, 4) : 0);
  }
  void Fixed64Field(std::string* out, uint32_t field, uint64_t v) {
    Tag(out, field, 1);
    out->append(reinterpret_cast<const char*>(&v), 8);
  }
  void Delimited(std::string* out, uint32_t field, const std::string& bytes) {
    Tag(out, field, 2);
    Varint(out, bytes.size(), 5, Chance(30) ? 1 : 0);
    out->append(bytes);
  }
  // An unknown field of any wire type, groups nested up to `depth`.
  void Unknown(std::string* out, uint32_t field, int depth) {
    switch (Uniform(0, 4)) {
      case 0: VarintField(out, field, Number()); break;
      case 1: Fixed64Field(out, field, Number()); break;
      case 2: Delimited(out, field, RandomBytes(8)); break;
      case 3: {
        Tag(out, field, 5);
        const uint32_t v = static_cast<uint32_t>(rng_());
        out->append(reinterpret_cast<const char*>(&v), 4);
        break;
      }
      default:
        Tag(out, field, 3);
        for (int i = Uniform(0, 2); i > 0 && depth > 0; --i) {
          Unknown(out, Uniform(1, 40), depth - 1);
        }
        Tag(out, field, 4);
    }
  }
  // Some unknown or wrongly typed fields for a message whose fields are
  // 1..`known`.
  void Noise(std::string* out, uint32_t known) {
    while (Chance(15)) {
      const uint32_t field = Chance(50) ? Uniform(1, known) : Uniform(known + 1, 600);
      Unknown(out, field, 3);
    }
  }

  uint64_t Number() {
    switch (Uniform(0, 3)) {
      case 0: return Uniform(0, 200);
      case 1: return rng_();
      case 2: return static_cast<uint64_t>(-static_cast<int64_t>(Uniform(1, 1 << 20)));
      default: return uint64_t{1} << Uniform(0, 63);
    }
  }
  std::string Text() {
    static const char* kPieces[] = {"a", "step", "é", "日本", "😀", " ", "\"", "\\", "\n",
                                    "xla_op_name", "long name over fifteen bytes"};
    std::string s;
    for (int i = Uniform(0, 6); i > 0; --i) s += kPieces[Uniform(0, 10)];
    if (Chance(1)) {  // invalid UTF-8: stray, overlong, surrogate, > U+10FFFF
      static const char* kBad[] = {"\x80", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                   "\xe2\x82"};
      s.insert(Uniform(0, static_cast<int>(s.size())), kBad[Uniform(0, 4)]);
    }
    return s;
  }
  std::string RandomBytes(int max) {
    std::string s(Uniform(0, max), '\0');
    for (char& c : s) c = static_cast<char>(rng_());
    return s;
  }

  std::string Stat() {
    std::string out;
    for (int n = Uniform(0, 4); n > 0; --n) {
      switch (Uniform(0, 7)) {
        case 0: VarintField(&out, 1, Uniform(0, 12)); break;
        case 1: Fixed64Field(&out, 2, Number()); break;
        case 2: VarintField(&out, 3, Number()); break;
        case 3: VarintField(&out, 4, Number()); break;
        case 4: Delimited(&out, 5, Text()); break;
        case 5: Delimited(&out, 6, RandomBytes(20)); break;
        case 6: VarintField(&out, 7, Uniform(0, 12)); break;
        default: Noise(&out, 7);
      }
    }
    return out;
  }
  std::string Event() {
    std::string out;
    for (int n = Uniform(0, 9); n > 0; --n) {
      switch (Uniform(0, 7)) {
        case 0: VarintField(&out, 1, Uniform(0, 12)); break;
        case 1: VarintField(&out, 2, Number()); break;
        case 2: VarintField(&out, 3, Number()); break;
        case 3: case 5: case 6: Delimited(&out, 4, Stat()); break;
        case 4: VarintField(&out, 5, Number()); break;
        default: Noise(&out, 5);
      }
    }
    return out;
  }
  std::string Line() {
    std::string out;
    for (int n = Uniform(0, 24); n > 0; --n) {
      switch (Uniform(0, 11)) {
        case 0: VarintField(&out, 1, Number()); break;
        case 1: Delimited(&out, 2, Chance(20) ? "_counters_" : Text()); break;
        case 2: VarintField(&out, 3, Number()); break;
        case 3: case 4: case 8: case 9: case 10: Delimited(&out, 4, Event()); break;
        case 5: VarintField(&out, 9, Number()); break;
        case 6: VarintField(&out, 10, Number()); break;
        case 7: Delimited(&out, 11, Text()); break;
        default: Noise(&out, 11);
      }
    }
    return out;
  }
  std::string Plane() {
    std::string out;
    for (int n = Uniform(0, 10); n > 0; --n) {
      switch (Uniform(0, 8)) {
        case 0: VarintField(&out, 1, Number()); break;
        case 1: Delimited(&out, 2, Text()); break;
        case 2: case 3: case 7: case 8: Delimited(&out, 3, Line()); break;
        case 4: Delimited(&out, 4, MapEntry(true)); break;
        case 5: Delimited(&out, 5, MapEntry(false)); break;
        case 6: Delimited(&out, 6, Stat()); break;
      }
      Noise(&out, 6);
    }
    if (Chance(3)) out.push_back(Chance(50) ? '\0' : '\x0c');  // tag 0, end-group
    return out;
  }
  // map<int64, XEventMetadata> / map<int64, XStatMetadata> entries.
  std::string MapEntry(bool event) {
    std::string entry;
    for (int n = Uniform(0, 3); n > 0; --n) {
      if (Chance(60)) VarintField(&entry, 1, Uniform(0, 12));
      if (Chance(80)) Delimited(&entry, 2, event ? EventMetadata() : StatMetadata());
      Noise(&entry, 2);
    }
    return entry;
  }
  std::string EventMetadata() {
    std::string out;
    for (int n = Uniform(0, 6); n > 0; --n) {
      switch (Uniform(0, 7)) {
        case 0: VarintField(&out, 1, Number()); break;
        case 1: Delimited(&out, 2, Text()); break;
        case 2: Delimited(&out, 3, RandomBytes(12)); break;
        case 3: Delimited(&out, 4, Text()); break;
        case 4: case 5: Delimited(&out, 5, Stat()); break;
        case 6: VarintField(&out, 6, Number()); break;
        default: {
          std::string packed;
          for (int i = Uniform(0, 4); i > 0; --i) Varint(&packed, Number(), 10, 0);
          Delimited(&out, 6, packed);
        }
      }
      Noise(&out, 6);
    }
    return out;
  }
  std::string StatMetadata() {
    std::string out;
    for (int n = Uniform(0, 4); n > 0; --n) {
      switch (Uniform(0, 2)) {
        case 0: VarintField(&out, 1, Number()); break;
        case 1: Delimited(&out, 2, Chance(10) ? "step_name" : Text()); break;
        default: Delimited(&out, 3, Text()); break;
      }
      Noise(&out, 3);
    }
    return out;
  }

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(int percent) { return Uniform(0, 99) < percent; }

 private:
  std::mt19937_64& rng_;
};

void Mutate(std::string* bytes, Writer* w, std::mt19937_64* rng) {
  for (int n = w->Uniform(1, 3); n > 0; --n) {
    const int size = static_cast<int>(bytes->size());
    const int at = w->Uniform(0, std::max(0, size - 1));
    switch (w->Uniform(0, 4)) {
      case 0: if (size > 0) (*bytes)[at] ^= static_cast<char>(1 << w->Uniform(0, 7)); break;
      case 1: if (size > 0) (*bytes)[at] = static_cast<char>((*rng)()); break;
      case 2: bytes->insert(bytes->begin() + at, static_cast<char>((*rng)())); break;
      case 3: if (size > 0) bytes->erase(at, 1); break;
      default: bytes->resize(at); break;
    }
  }
}

// The reference: what space_file.cc did before the hand reader.
bool GeneratedParse(const std::string& bytes, xs::XPlane* plane) {
  google::protobuf::io::CodedInputStream coded(
      reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  coded.PushLimit(static_cast<int>(bytes.size()));
  return plane->ParseFromCodedStream(&coded) && coded.BytesUntilLimit() == 0;
}

// A generated XStat as the reader's view of it.
StatView ViewOf(const xs::XStat& stat) {
  StatView v;
  v.metadata_id = stat.metadata_id();
  switch (stat.value_case()) {
    case xs::XStat::kDoubleValue: {
      const double d = stat.double_value();
      v.kind = StatKind::kDouble;
      std::memcpy(&v.bits, &d, sizeof d);  // bits: NaN payloads must match too
      break;
    }
    case xs::XStat::kUint64Value: v.kind = StatKind::kUint64; v.bits = stat.uint64_value(); break;
    case xs::XStat::kInt64Value:
      v.kind = StatKind::kInt64;
      v.bits = static_cast<uint64_t>(stat.int64_value());
      break;
    case xs::XStat::kStrValue: v.kind = StatKind::kStr; v.text = stat.str_value(); break;
    case xs::XStat::kBytesValue: v.kind = StatKind::kBytes; v.text = stat.bytes_value(); break;
    case xs::XStat::kRefValue: v.kind = StatKind::kRef; v.bits = stat.ref_value(); break;
    case xs::XStat::VALUE_NOT_SET: break;
  }
  return v;
}

void ExpectSameStat(const xs::XStat& want, const StatView& got) {
  const StatView w = ViewOf(want);
  EXPECT_EQ(got.metadata_id, w.metadata_id);
  EXPECT_EQ(got.kind, w.kind);
  EXPECT_EQ(got.bits, w.bits);
  EXPECT_EQ(got.text, w.text);
}

void ExpectSameStats(const google::protobuf::RepeatedPtrField<xs::XStat>& want,
                     std::span<const StatView> got) {
  ASSERT_EQ(got.size(), static_cast<size_t>(want.size()));
  for (int k = 0; k < want.size(); ++k) ExpectSameStat(want[k], got[k]);
}

void ExpectSameMetadata(const xs::XPlane& want, const PlaneView& got) {
  ASSERT_EQ(got.event_metadata.size(), want.event_metadata().size());
  for (const auto& [id, md] : want.event_metadata()) {
    auto it = got.event_metadata.find(id);
    ASSERT_NE(it, got.event_metadata.end()) << id;
    EXPECT_EQ(it->second.id, md.id());
    EXPECT_EQ(it->second.name, md.name());
    EXPECT_EQ(it->second.display_name, md.display_name());
    ExpectSameStats(md.stats(), got.StatsOf(it->second));
  }
  ASSERT_EQ(got.stat_metadata.size(), want.stat_metadata().size());
  for (const auto& [id, md] : want.stat_metadata()) {
    auto it = got.stat_metadata.find(id);
    ASSERT_NE(it, got.stat_metadata.end()) << id;
    EXPECT_EQ(it->second.id, md.id());
    EXPECT_EQ(it->second.name, md.name());
    EXPECT_EQ(it->second.description, md.description());
  }
}

void ExpectSamePlane(const xs::XPlane& want, const PlaneView& got) {
  EXPECT_EQ(got.id, want.id());
  EXPECT_EQ(got.name, want.name());
  ExpectSameStats(want.stats(), got.plane_stats);
  ExpectSameMetadata(want, got);
  ASSERT_EQ(got.lines.size(), static_cast<size_t>(want.lines_size()));
  for (int i = 0; i < want.lines_size(); ++i) {
    const xs::XLine& wl = want.lines(i);
    const LineView& gl = got.lines[i];
    EXPECT_EQ(gl.id, wl.id());
    EXPECT_EQ(gl.display_id, wl.display_id());
    EXPECT_EQ(gl.timestamp_ns, wl.timestamp_ns());
    EXPECT_EQ(gl.duration_ps, wl.duration_ps());
    EXPECT_EQ(gl.name, wl.name());
    EXPECT_EQ(gl.display_name, wl.display_name());
    ASSERT_EQ(gl.events_size(), static_cast<uint64_t>(wl.events_size()));
    for (int j = 0; j < wl.events_size(); ++j) {
      const xs::XEvent& we = wl.events(j);
      const EventView& ge = got.EventsOf(gl)[j];
      EXPECT_EQ(ge.metadata_id, we.metadata_id());
      EXPECT_EQ(ge.duration_ps, we.duration_ps());
      EXPECT_EQ(ge.offset_ps(), we.offset_ps());
      EXPECT_EQ(ge.data == EventView::Data::kNumOccurrences,
                we.data_case() == xs::XEvent::kNumOccurrences);
      EXPECT_EQ(ge.data == EventView::Data::kNone,
                we.data_case() == xs::XEvent::DATA_NOT_SET);
      if (ge.data == EventView::Data::kNumOccurrences) {
        EXPECT_EQ(ge.data_value, we.num_occurrences());
      }
      ExpectSameStats(we.stats(), got.StatsOf(ge));
    }
  }
}

struct Tally {
  int accepted = 0;
  int rejected = 0;
  uint64_t events = 0;  // in accepted planes
  uint64_t stats = 0;
};

void PrintTo(const Tally& t, std::ostream* os) {
  *os << t.accepted << " accepted (" << t.events << " events, " << t.stats
      << " stats), " << t.rejected << " rejected";
}

void Check(const std::string& bytes, PlaneView* view, Tally* tally) {
  xs::XPlane want;
  const bool want_ok = GeneratedParse(bytes, &want);
  const bool got_ok = DecodePlane(bytes, view);
  ASSERT_EQ(got_ok, want_ok) << "bytes (" << bytes.size() << "): "
                             << ::testing::PrintToString(bytes);
  if (!got_ok) {
    ++tally->rejected;
    return;
  }
  ++tally->accepted;
  tally->events += view->events.size();
  tally->stats += view->stats.size();
  ExpectSamePlane(want, *view);
}

class WireReaderTest : public ::testing::Test {
 protected:
  // Invalid UTF-8 makes the generated parser log a line per plane.
  void SetUp() override { google::protobuf::SetLogHandler(nullptr); }
};

TEST_F(WireReaderTest, AgreesWithGeneratedParserOnRandomPlanes) {
  std::mt19937_64 rng(14);
  Writer w(&rng);
  PlaneView view;  // reused, as the reader does
  Tally tally;
  for (int i = 0; i < 4000 && !HasFatalFailure(); ++i) Check(w.Plane(), &view, &tally);
  // Most random planes are valid; invalid UTF-8 and trailing tags reject some.
  EXPECT_GT(tally.accepted, 2000) << ::testing::PrintToString(tally);
  EXPECT_GT(tally.rejected, 100) << ::testing::PrintToString(tally);
  EXPECT_GT(tally.stats, 50000) << ::testing::PrintToString(tally);
  std::cout << ::testing::PrintToString(tally) << "\n";
}

TEST_F(WireReaderTest, AgreesWithGeneratedParserOnMutatedPlanes) {
  std::mt19937_64 rng(1414);
  Writer w(&rng);
  PlaneView view;
  Tally tally;
  for (int i = 0; i < 10000 && !HasFatalFailure(); ++i) {
    std::string bytes = w.Plane();
    Mutate(&bytes, &w, &rng);
    Check(bytes, &view, &tally);
  }
  EXPECT_GT(tally.accepted, 1000) << ::testing::PrintToString(tally);
  EXPECT_GT(tally.rejected, 1000) << ::testing::PrintToString(tally);
  std::cout << ::testing::PrintToString(tally) << "\n";
}

// Edge cases of protobuf's limits, each next to its accepted neighbour.
TEST_F(WireReaderTest, AgreesAtTheWireFormatLimits) {
  std::mt19937_64 rng(7);
  Writer w(&rng);
  PlaneView view;
  Tally tally;
  const auto plane_with_stat = [](const std::string& stat) {
    std::string event, line, plane;
    Writer::Varint(&event, 4 << 3 | 2, 5, 0);
    Writer::Varint(&event, stat.size(), 5, 0);
    event += stat;
    Writer::Varint(&line, 4 << 3 | 2, 5, 0);
    Writer::Varint(&line, event.size(), 5, 0);
    line += event;
    Writer::Varint(&plane, 3 << 3 | 2, 5, 0);
    Writer::Varint(&plane, line.size(), 5, 0);
    return plane + line;
  };
  // Groups nested inside a stat: around the recursion limit.
  for (int depth = 94; depth <= 100; ++depth) {
    std::string stat;
    for (int i = 0; i < depth; ++i) Writer::Varint(&stat, 9 << 3 | 3, 5, 0);
    for (int i = 0; i < depth; ++i) Writer::Varint(&stat, 9 << 3 | 4, 5, 0);
    Check(plane_with_stat(stat), &view, &tally);
  }
  // Mismatched end group, group running to the end of its message.
  Check(plane_with_stat("\x4b\x54"), &view, &tally);
  Check(plane_with_stat("\x4b"), &view, &tally);
  // Tags of 5 and 6 bytes; varints of 10 and 11 bytes; a 10th byte > 1.
  Check(plane_with_stat("\x88\x80\x80\x80\x00\x05"), &view, &tally);
  Check(plane_with_stat("\x88\x80\x80\x80\x80\x00\x05"), &view, &tally);
  Check(plane_with_stat("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f"), &view, &tally);
  Check(plane_with_stat("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), &view, &tally);
  // A length whose 5th byte is >= 8, and field number 0 with a wire type.
  Check(plane_with_stat("\x2a\x80\x80\x80\x80\x08"), &view, &tally);
  Check(plane_with_stat("\x01"), &view, &tally);
  // Wire types 6 and 7; tag 0 and end-group inside a nested message.
  Check(plane_with_stat("\x0e"), &view, &tally);
  Check(plane_with_stat("\x0f"), &view, &tally);
  Check(plane_with_stat(std::string("\x00", 1)), &view, &tally);
  Check(plane_with_stat("\x0c"), &view, &tally);
  // Tag 0 / end-group at the end of the plane, and before more bytes.
  Check(plane_with_stat("") + std::string("\x00", 1), &view, &tally);
  Check(plane_with_stat("") + "\x0c", &view, &tally);
  Check(plane_with_stat("") + std::string("\x00\x08\x01", 3), &view, &tally);
  // A string or double cut short by its enclosing message.
  Check(plane_with_stat("\x2a\x05" "abc"), &view, &tally);
  Check(plane_with_stat("\x11" "1234567"), &view, &tally);
  // UTF-8 edge cases in str_value (checked) and bytes_value (not).
  for (const char* s : {"\xed\x9f\xbf", "\xed\xa0\x80", "\xf4\x8f\xbf\xbf", "\xf4\x90\x80\x80",
                        "\xc1\xbf", "\xc2\x80", "\xe0\x9f\xbf", "\xf0\x8f\xbf\xbf", "\xff"}) {
    for (char field : {'\x2a', '\x32'}) {
      std::string stat(1, field);
      stat.push_back(static_cast<char>(std::strlen(s)));
      Check(plane_with_stat(stat + s), &view, &tally);
    }
  }
  EXPECT_GT(tally.accepted, 10);
  EXPECT_GT(tally.rejected, 10);
}

// The 8-bytes-at-a-time path must write what AppendJsonString writes, with
// a character to escape at every position of a word and past it.
TEST(Utf8JsonStringTest, SameBytesAsAppendJsonString) {
  std::mt19937_64 rng(20);
  static const char* kPieces[] = {"a", "é", "日本", "😀", "\"", "\\", "\n", "\x01", "\x1f",
                                  " ", "\x7f", "/", "plain ascii text"};
  int escaped = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    for (int n = static_cast<int>(rng() % 12); n > 0; --n) {
      s += rng() % 4 == 0 ? kPieces[rng() % 13] : kPieces[rng() % 2 == 0 ? 0 : 12];
    }
    ASSERT_TRUE(IsValidUtf8(s));
    std::string want = "x", got = "x";
    AppendJsonString(&want, s);
    xspace_json::AppendUtf8JsonString(&got, s);
    ASSERT_EQ(got, want) << ::testing::PrintToString(s);
    escaped += want.size() != s.size() + 3;
  }
  EXPECT_GT(escaped, 5000);
}

}  // namespace
}  // namespace tracetable::xspace_wire
