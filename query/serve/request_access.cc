#include "query/serve/request_access.h"

#include <algorithm>
#include <cctype>

namespace tracetable::serve {
namespace {

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool Decode(std::string_view in, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int hi = Hex(in[i + 1]), lo = Hex(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "name:port" -> "name"; "[v6]:port" -> "[v6]".
std::string_view StripPort(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  const size_t colon = host.rfind(':');
  if (colon != std::string_view::npos && host.find(':') == colon) return host.substr(0, colon);
  return host;
}

}  // namespace

bool SplitTarget(std::string_view target, std::string* path, Params* params) {
  params->clear();
  const size_t q = target.find('?');
  if (!Decode(target.substr(0, q), false, path)) return false;
  if (q == std::string_view::npos) return true;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    std::string key, value;
    if (!Decode(pair.substr(0, eq), true, &key)) return false;
    if (eq != std::string_view::npos && !Decode(pair.substr(eq + 1), true, &value)) return false;
    params->emplace(std::move(key), std::move(value));
  }
  return true;
}

bool HostAllowed(std::string_view host_header, std::string_view bound,
                 const std::vector<std::string>& allowed) {
  const std::string host = Lower(StripPort(host_header));
  if (host.empty()) return false;
  if (host == "localhost" || host == "127.0.0.1" || host == "[::1]") return true;
  const std::string b = Lower(bound);
  if (host == b || host == "[" + b + "]") return true;
  return std::any_of(allowed.begin(), allowed.end(),
                     [&](const std::string& a) { return Lower(StripPort(a)) == host; });
}

std::string_view CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const size_t semi = header.find(';');
    std::string_view part = header.substr(0, semi);
    header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    if (part.size() > name.size() && part.substr(0, name.size()) == name && part[name.size()] == '=') {
      return part.substr(name.size() + 1);
    }
  }
  return {};
}

bool SameSecret(std::string_view a, std::string_view b) {
  unsigned diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i]) ^
                                                static_cast<unsigned char>(b.empty() ? 0 : b[i % b.size()]);
  return diff == 0;
}

}  // namespace tracetable::serve
