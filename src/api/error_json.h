// How a Status reads in an HTTP answer: its status code and the {"code", "message"} object of an
// error body. Free of the HTTP layer, so that request and response parsing (and its fuzzer) can
// use it alone; api/errors.h builds whole responses from it.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tf::api {

int HttpStatusFor(StatusCode code);
nlohmann::json ErrorJson(const Status& status);

}  // namespace tf::api
