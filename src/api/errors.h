// The one place where a Status becomes an HTTP status, and the JSON shapes of every response:
// errors are {"error": {"code": "not_found", "message": "..."}}.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "http/http.h"

namespace tf::api {

int HttpStatusFor(StatusCode code);
nlohmann::json ErrorJson(const Status& status);
http::Response ErrorResponse(const Status& status);
http::Response JsonResponse(int status, const nlohmann::json& body);

}  // namespace tf::api
