// The one place where a Status becomes an HTTP response, and the JSON shape of every response:
// errors are {"error": {"code": "not_found", "message": "..."}} (the status code and the error
// object come from api/error_json.h).
#pragma once

#include <nlohmann/json.hpp>

#include "api/error_json.h"
#include "base/status.h"
#include "http/http.h"

namespace tf::api {

http::Response ErrorResponse(const Status& status);
http::Response JsonResponse(int status, const nlohmann::json& body);

}  // namespace tf::api
