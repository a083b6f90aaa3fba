// JSON calls to a tensorfleet server with a bearer token, errors turned back into Status: what
// the CLI and the worker both speak.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"
#include "http/http.h"

namespace tf::client {

// The server's error in an answer that is not 2xx: {"error": {"code", "message"}} becomes that
// Status; anything else kInternal naming the HTTP status.
Status StatusFromErrorBody(int http_status, std::string_view body);

class JsonClient {
 public:
  // kInvalidArgument if `base_url` does not parse.
  static Result<std::unique_ptr<JsonClient>> Create(const std::string& base_url, std::string token);

  // A 2xx answer returns its JSON body (null when empty); any other the server's error.
  // kUnavailable when the server cannot be reached. Not thread-safe: one client per thread.
  Result<nlohmann::json> Call(const std::string& method, const std::string& target,
                              const nlohmann::json& body = nullptr,
                              std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // Safe from any thread: ends the call in progress and every later one (http::Client::Cancel).
  void Cancel() { client_->Cancel(); }

  const std::string& base_url() const { return base_url_; }
  // The bearer token of later calls.
  void set_token(std::string token) { token_ = std::move(token); }

 private:
  JsonClient(std::string base_url, std::string token, std::unique_ptr<http::Client> client)
      : base_url_(std::move(base_url)), token_(std::move(token)), client_(std::move(client)) {}

  std::string base_url_;
  std::string token_;
  std::unique_ptr<http::Client> client_;
};

}  // namespace tf::client
