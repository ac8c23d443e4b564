// Encoding of one SearchNameGroup (key "P", format/tracetable.proto): the
// search postings of the rare names among 64 consecutive name ids, and back.
//
// Contract: DecodeSearchNameGroup(group, EncodeSearchNameGroup(group, e)) == e
// for any entries with distinct ascending names inside the group, each with
// at least one rank, ranks strictly ascending. Decoding checks every count,
// that each name is in the group and that its ranks ascend; anything else is
// an error (a damaged table), never a guess.
#ifndef TRACETABLE_FORMAT_SEARCH_GROUP_CODEC_H_
#define TRACETABLE_FORMAT_SEARCH_GROUP_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/tracetable.pb.h"

namespace tracetable {

// One name's postings: the ranks of the tiles holding an event named `name`.
struct SearchGroupEntry {
  uint32_t name = 0;
  std::vector<uint32_t> ranks;
  bool operator==(const SearchGroupEntry&) const = default;
};

std::string EncodeSearchNameGroup(uint32_t group, const std::vector<SearchGroupEntry>& entries);

// Replaces `out` with the entries of group `group`'s encoded value, by name.
absl::Status DecodeSearchNameGroup(uint32_t group, std::string_view bytes, std::vector<SearchGroupEntry>* out);

// One group's value parsed once and looked up name by name, decoding only
// the name asked for (a search for a text matching many names visits a
// group per name).
class SearchNameGroupReader {
 public:
  // Checks the numbers of names, counts and postings against each other.
  absl::Status Parse(uint32_t group, std::string_view bytes);
  // Replaces `ranks` with the name's postings and returns true if the group
  // holds the name; false if it does not.
  absl::StatusOr<bool> Find(uint32_t name, std::vector<uint32_t>* ranks) const;

 private:
  uint32_t group_ = 0;
  proto::SearchNameGroup parsed_;
};

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_SEARCH_GROUP_CODEC_H_
