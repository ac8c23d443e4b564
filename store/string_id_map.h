// StringIdMap: a hash map from string to uint32_t id whose short keys live
// in the map's own slots.
//
// A parse worker looks up every event's name here. A trace of XLA ops has
// ~100k distinct names, used about evenly, so most lookups miss the
// parser's small cache and land here; with keys that view texts stored
// elsewhere, each lookup read three cache lines (control bytes, slot, text)
// and comparing against the text was the parse workers' largest single
// cost (gen 10M, perf). A key of at most kInlineBytes (most names) is
// compared within its slot: 100k names, 53 ns a lookup instead of 178 ns
// (bench/micro/string_id_map.cc, medians of 3).
//
// Contract:
//  - Find gives the id Insert gave the same text, or nothing.
//  - Insert(s, id): s must not be present. A text longer than kInlineBytes
//    is viewed, not copied: it must outlive the map.
//  - bytes() is the heap the map holds (slots and control bytes).
#ifndef TRACETABLE_STORE_STRING_ID_MAP_H_
#define TRACETABLE_STORE_STRING_ID_MAP_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "format/absl_compat.h"
#include "format/same_text.h"

namespace tracetable {

class StringIdMap {
 public:
  static constexpr size_t kInlineBytes = 28;

  std::optional<uint32_t> Find(std::string_view s) const {
    if (s.size() <= kInlineBytes) {
      auto it = short_.find(s);
      if (it != short_.end()) return it->second;
    } else {
      auto it = long_.find(s);
      if (it != long_.end()) return it->second;
    }
    return std::nullopt;
  }

  void Insert(std::string_view s, uint32_t id) {
    if (s.size() <= kInlineBytes) {
      short_.emplace(InlineKey(s), id);
    } else {
      long_.emplace(s, id);
    }
  }

  // Starts loading the slot Find(s) will read.
  void Prefetch(std::string_view s) const {
    if (s.size() <= kInlineBytes) {
      short_.prefetch(s);
    } else {
      long_.prefetch(s);
    }
  }

  size_t bytes() const {
    // A slot (key and id) and a control byte per slot of capacity.
    return short_.capacity() * (sizeof(std::pair<const InlineKey, uint32_t>) + 1) +
           long_.capacity() * (sizeof(std::pair<const std::string_view, uint32_t>) + 1);
  }

 private:
  struct InlineKey {
    explicit InlineKey(std::string_view s) : size(static_cast<uint32_t>(s.size())) {
      std::memcpy(bytes, s.data(), s.size());
    }
    std::string_view view() const { return {bytes, size}; }
    char bytes[kInlineBytes];
    uint32_t size;
  };
  struct InlineHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return TextHash{}(s); }
    size_t operator()(const InlineKey& k) const { return TextHash{}(k.view()); }
  };
  struct InlineEq {
    using is_transparent = void;
    static std::string_view View(std::string_view s) { return s; }
    static std::string_view View(const InlineKey& k) { return k.view(); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const { return SameText(View(a), View(b)); }
  };

  absl::flat_hash_map<InlineKey, uint32_t, InlineHash, InlineEq> short_;
  absl::flat_hash_map<std::string_view, uint32_t, TextHash> long_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_STRING_ID_MAP_H_
