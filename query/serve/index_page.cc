#include "query/serve/index_page.h"

#include "absl/strings/str_cat.h"
#include "query/serve/table_watch.h"

namespace tracetable::serve {

std::string ScriptSafeJson(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    out.push_back(json[i]);
    // Outside JSON strings "</" cannot occur; inside one "\/" is "/".
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') out.push_back('\\');
  }
  return out;
}

std::string IndexPage(std::string_view html, const std::vector<NamedTable>& tables) {
  const size_t at = html.find(kBootMarker);
  if (at == std::string_view::npos) return std::string(html);
  std::string boot = absl::StrCat("<script id=\"tt-tables\" type=\"application/json\">",
                                  ScriptSafeJson(TablesReply(tables).body), "</script>");
  if (!tables.empty() && !StaleTableReply(*tables[0].table)) {
    absl::StrAppend(&boot, "\n<script id=\"tt-table\" type=\"application/json\">",
                    ScriptSafeJson(TableReply(tables[0]).body), "</script>");
  }
  std::string page(html.substr(0, at));
  page.append(boot).append(html.substr(at + kBootMarker.size()));
  return page;
}

}  // namespace tracetable::serve
