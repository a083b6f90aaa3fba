// Private to the .cc files of http/ (the server and both clients): Beast's names as they use
// them, and the small helpers each of them needs. Nothing outside http/ includes Beast.
#pragma once

#include <boost/asio/redirect_error.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <string_view>

#include "base/async.h"  // first: see the note on <utility> there

namespace tf::http::internal {

namespace beast = boost::beast;
namespace bhttp = beast::http;
using boost::system::error_code;

// A completion token for co_await that leaves the error in `ec` instead of throwing.
inline auto RedirectTo(error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

inline beast::string_view AsBeast(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace tf::http::internal
