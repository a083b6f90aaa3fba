#include "client/api_client.h"

#include <cstdlib>
#include <fstream>

#include "client/bearer.h"
#include "client/json_client.h"

namespace tf::client {
namespace {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::string DefaultDataDir() {
  std::string home = Env("TENSORFLEET_HOME");
  if (!home.empty()) return home;
  std::string user_home = Env("HOME");
  return (user_home.empty() ? std::string(".") : user_home) + "/.tensorfleet";
}

Result<ApiClient> ApiClient::Connect(const Connection& c) {
  std::string dir = c.data_dir.empty() ? DefaultDataDir() : c.data_dir;
  std::string server = !c.server.empty() ? c.server : Env("TENSORFLEET_URL");
  if (server.empty()) server = ReadFirstLine(dir + "/url");
  if (server.empty()) {
    return FailedPrecondition(
        "no server to talk to: start one with `tensorfleet up`, or pass "
        "--server URL (or set TENSORFLEET_URL); looked for " +
        dir + "/url");
  }
  std::string token = !c.token.empty() ? c.token : Env("TENSORFLEET_TOKEN");
  if (token.empty()) token = ReadFirstLine(dir + "/admin-token");
  if (token.empty()) {
    return FailedPrecondition("no API token: pass --token (or set TENSORFLEET_TOKEN); looked for " +
                              dir + "/admin-token");
  }
  TF_ASSIGN_OR_RETURN(auto client, http::Client::Create(server));
  return ApiClient(server, token, std::move(client));
}

Result<Json> ApiClient::Call(const std::string& method, const std::string& target, const Json& body,
                             std::chrono::milliseconds timeout) {
  http::Headers headers = {{"Authorization", BearerToken(token_)}};
  std::string payload;
  if (!body.is_null()) {
    headers.emplace_back("Content-Type", "application/json");
    payload = body.dump();
  }
  last_call_answered_ = false;
  auto response = client_->Send(method, target, headers, payload, timeout);
  if (!response.ok()) {
    return Status(response.status().code(), "cannot reach the tensorfleet server at " + server_ +
                                                ": " + response.status().message());
  }
  if (response->status < 200 || response->status > 299) {
    const Json error = Json::parse(response->body, nullptr, /*allow_exceptions=*/false);
    last_call_answered_ = error.is_object() && error.contains("error");
    return client::StatusFromErrorBody(response->status, response->body);
  }
  last_call_answered_ = true;
  Json j = Json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Internal("the server answered with something that is not JSON");
  return j;
}

Result<http::ClientResponse> ApiClient::Exchange(http::ClientRequest request) {
  request.headers.emplace_back("Authorization", BearerToken(token_));
  // Whether a streamed answer had begun: an error after that is a response cut short (a
  // server stopped, or one that found the content damaged), not a server out of reach.
  bool answering = false;
  if (request.on_head) {
    request.on_head = [&answering,
                       inner = std::move(request.on_head)](const http::ClientResponse& head) {
      answering = true;
      return inner(head);
    };
  }
  auto response = client_->Exchange(request);
  if (!response.ok() && answering) {
    return Status(response.status().code(),
                  "the tensorfleet server at " + server_ +
                      " stopped sending its answer half way (its log says why): " +
                      response.status().message());
  }
  if (!response.ok()) {
    return Status(response.status().code(), "cannot reach the tensorfleet server at " + server_ +
                                                ": " + response.status().message());
  }
  if (response->status >= 200 && response->status < 300) return response;
  return client::StatusFromErrorBody(response->status, response->body);
}

}  // namespace tf::client
