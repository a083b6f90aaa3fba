// How the CLI reaches a server: where it is, which token to send, and JSON calls with errors
// turned into Status.
//
// The server URL and token come from, in order: --server/--token, TENSORFLEET_URL and
// TENSORFLEET_TOKEN, then the files `url` and `admin-token` in the data directory
// (--data-dir, TENSORFLEET_HOME, or ~/.tensorfleet), which `tensorfleet up` writes.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "http/http.h"

namespace tf::client {

using Json = nlohmann::json;

struct Connection {
  std::string server;    // flag value, may be empty
  std::string token;     // flag value, may be empty
  std::string data_dir;  // flag value, may be empty
  bool json = false;     // print JSON instead of tables
};

// The data directory to use when none is given: TENSORFLEET_HOME or ~/.tensorfleet.
std::string DefaultDataDir();

class ApiClient {
 public:
  static Result<ApiClient> Connect(const Connection& c);

  // Sends a JSON request. A 2xx answer returns its JSON body; any other returns the server's
  // error as a Status (its code and message).
  Result<Json> Call(const std::string& method, const std::string& target,
                    const Json& body = nullptr,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // Sends `request` with the token added; its body and the answer's may stream (see
  // http::ClientRequest). An answer that is not 2xx becomes the server's error, as for Call.
  Result<http::ClientResponse> Exchange(http::ClientRequest request);

  // Whether the last Call's answer came from the tensorfleet server itself: a 2xx, or an error
  // in its own format. False when the request failed on the way (no connection, timed out, the
  // connection closed before the answer) or a proxy answered for it (a 502 with no error of
  // ours): then a request that changes something may have been carried out all the same.
  bool last_call_answered() const { return last_call_answered_; }

  const std::string& server() const { return server_; }
  const std::string& token() const { return token_; }

 private:
  ApiClient(std::string server, std::string token, std::unique_ptr<http::Client> client)
      : server_(std::move(server)), token_(std::move(token)), client_(std::move(client)) {}
  std::string server_;
  std::string token_;
  std::shared_ptr<http::Client> client_;
  bool last_call_answered_ = false;
};

}  // namespace tf::client
