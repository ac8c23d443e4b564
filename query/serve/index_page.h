// The viewer's page (GET /): index.html with the answers its first view
// would otherwise ask for, one round trip after another, written into it —
// the table list (GET /api/tables) and the first table's answer (GET
// /api/tables/{first}) — so the page's first tile requests go out as soon
// as its modules run. Each answer is byte for byte what its API call
// returns, inside <script type="application/json"> with every "</" written
// "<\/" (the same JSON, and no text can end the element early). A table
// whose files were replaced (table_watch.h) is left out: the page then asks
// for it and gets the API's error.
#ifndef TRACETABLE_QUERY_SERVE_INDEX_PAGE_H_
#define TRACETABLE_QUERY_SERVE_INDEX_PAGE_H_

#include <string>
#include <string_view>
#include <vector>

#include "query/serve/api.h"

namespace tracetable::serve {

// The marker in index.html the answers replace (once).
inline constexpr std::string_view kBootMarker = "<!--tt-boot-->";

// `html` with the marker replaced by the table list (id "tt-tables") and,
// when there is a table, its answer (id "tt-table").
std::string IndexPage(std::string_view html, const std::vector<NamedTable>& tables);

// JSON text made safe inside a <script> element ("</" -> "<\/").
std::string ScriptSafeJson(std::string_view json);

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_INDEX_PAGE_H_
