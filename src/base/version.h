// The version of tensorfleet, as the server, the worker and the CLI report it.
#pragma once

namespace tf {

inline constexpr const char* kTensorfleetVersion = "0.1.0";

}  // namespace tf
