// What both HTTP clients (client.cc, upstream.cc) check of a request before sending it.
#pragma once

#include <string>

#include "base/status.h"
#include "http/http.h"

namespace tf::http {

// kInvalidArgument for a method that is not an RFC 7230 token, a target that does not start
// with '/' or holds control characters or spaces, or a header whose name is not a token or
// whose value holds control characters (no CR/LF smuggling).
Status CheckRequest(const std::string& method, const std::string& target, const Headers& headers);

}  // namespace tf::http
