#include "format/search_group_codec.h"

#include <bit>

#include "absl/strings/str_cat.h"
#include "format/keys.h"

namespace tracetable {
namespace {

absl::Status Bad(uint32_t group, const char* what) {
  return absl::DataLossError(absl::StrCat("search name group ", group, ": ", what));
}

}  // namespace

std::string EncodeSearchNameGroup(uint32_t group, const std::vector<SearchGroupEntry>& entries) {
  proto::SearchNameGroup g;
  uint64_t names = 0;
  int64_t prev_first = 0;
  for (const SearchGroupEntry& e : entries) {
    names |= uint64_t{1} << (e.name - (group << kSearchGroupShift));
    g.add_count(static_cast<uint32_t>(e.ranks.size()));
    g.add_first_delta(int64_t{e.ranks[0]} - prev_first);
    prev_first = e.ranks[0];
    for (size_t i = 1; i < e.ranks.size(); ++i) g.add_rank_delta(e.ranks[i] - e.ranks[i - 1]);
  }
  g.set_names(names);
  return g.SerializeAsString();
}

absl::Status SearchNameGroupReader::Parse(uint32_t group, std::string_view bytes) {
  group_ = group;
  if (!parsed_.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return Bad(group, "does not parse");
  const proto::SearchNameGroup& g = parsed_;
  if (std::popcount(g.names()) != g.count_size() || g.first_delta_size() != g.count_size()) {
    return Bad(group, "names, counts and first ranks differ in number");
  }
  uint64_t others = 0;  // postings after each name's first
  for (uint32_t count : g.count()) {
    if (count == 0) return Bad(group, "a name without postings");
    others += count - 1;
  }
  if (others != static_cast<uint64_t>(g.rank_delta_size())) return Bad(group, "counts do not match the postings");
  return absl::OkStatus();
}

absl::StatusOr<bool> SearchNameGroupReader::Find(uint32_t name, std::vector<uint32_t>* ranks) const {
  ranks->clear();
  const proto::SearchNameGroup& g = parsed_;
  const uint32_t bit = name - (group_ << kSearchGroupShift);
  if (name >> kSearchGroupShift != group_ || !(g.names() >> bit & 1)) return false;
  const int index = std::popcount(g.names() & ((uint64_t{1} << bit) - 1));
  int64_t first = 0;
  int at = 0;  // the name's other postings in rank_delta
  for (int i = 0; i < index; ++i) {
    first += g.first_delta(i);
    at += static_cast<int>(g.count(i)) - 1;
  }
  first += g.first_delta(index);
  if (first < 0 || first > int64_t{UINT32_MAX}) return Bad(group_, "a first posting out of range");
  uint64_t rank = static_cast<uint64_t>(first);
  ranks->push_back(static_cast<uint32_t>(rank));
  for (uint32_t k = 1; k < g.count(index); ++k, ++at) {
    if (g.rank_delta(at) == 0) return Bad(group_, "postings out of order");
    rank += g.rank_delta(at);
    if (rank > UINT32_MAX) return Bad(group_, "a posting past 2^32 tiles");
    ranks->push_back(static_cast<uint32_t>(rank));
  }
  return true;
}

absl::Status DecodeSearchNameGroup(uint32_t group, std::string_view bytes, std::vector<SearchGroupEntry>* out) {
  out->clear();
  SearchNameGroupReader reader;
  if (absl::Status s = reader.Parse(group, bytes); !s.ok()) return s;
  for (uint32_t i = 0; i < 64; ++i) {
    SearchGroupEntry e{(group << kSearchGroupShift) + i, {}};
    absl::StatusOr<bool> found = reader.Find(e.name, &e.ranks);
    if (!found.ok()) return found.status();
    if (*found) out->push_back(std::move(e));
  }
  return absl::OkStatus();
}

}  // namespace tracetable
