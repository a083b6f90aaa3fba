#include "api/errors.h"

namespace tf::api {

http::Response ErrorResponse(const Status& status) {
  http::Response r = JsonResponse(HttpStatusFor(status.code()), {{"error", ErrorJson(status)}});
  if (status.code() == StatusCode::kUnauthenticated) {
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
  }
  return r;
}

http::Response JsonResponse(int status, const nlohmann::json& body) {
  http::Response r;
  r.status = status;
  // Invalid UTF-8 (a request path echoed in an error, say) becomes U+FFFD instead of throwing.
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  r.body.push_back('\n');
  return r;
}

}  // namespace tf::api
