// The one place the API's credential header is written.
#pragma once

#include <string>
#include <string_view>

namespace tf::client {

// The value of the Authorization header that carries `token` ("Bearer tfk_...").
inline std::string BearerToken(std::string_view token) { return "Bearer " + std::string(token); }

}  // namespace tf::client
