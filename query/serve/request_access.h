// Who may ask, decided before any work: the Host header check that stops DNS
// rebinding (a page on another site reaching a loopback server under its own
// name), the optional shared token, and the request target split into a
// decoded path and query parameters. Pure functions; the front applies them.
#ifndef TRACETABLE_QUERY_SERVE_REQUEST_ACCESS_H_
#define TRACETABLE_QUERY_SERVE_REQUEST_ACCESS_H_

#include <string>
#include <string_view>
#include <vector>

#include "query/serve/api.h"

namespace tracetable::serve {

// The path (percent-decoded) and the parameters ('+' is a space) of a target.
// False when an escape is malformed.
bool SplitTarget(std::string_view target, std::string* path, Params* params);

// True when `host_header` (name or address, optional ":port"), lowercased,
// is localhost, 127.0.0.1, [::1], `bound` or one of `allowed`.
bool HostAllowed(std::string_view host_header, std::string_view bound,
                 const std::vector<std::string>& allowed);

// The value of cookie `name` in a Cookie header, or "".
std::string_view CookieValue(std::string_view cookie_header, std::string_view name);

// Compares without an early exit, so the time taken does not tell how much of
// a guessed token was right.
bool SameSecret(std::string_view a, std::string_view b);

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_REQUEST_ACCESS_H_
