#include "cli/api_client.h"

#include <cstdlib>
#include <fstream>

namespace tf::cli {
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

StatusCode CodeFromName(const std::string& name) {
  static const std::pair<const char*, StatusCode> kCodes[] = {
      {"invalid_argument", StatusCode::kInvalidArgument},
      {"not_found", StatusCode::kNotFound},
      {"already_exists", StatusCode::kAlreadyExists},
      {"failed_precondition", StatusCode::kFailedPrecondition},
      {"aborted", StatusCode::kAborted},
      {"unavailable", StatusCode::kUnavailable},
      {"resource_exhausted", StatusCode::kResourceExhausted},
      {"unauthenticated", StatusCode::kUnauthenticated},
      {"permission_denied", StatusCode::kPermissionDenied},
      {"deadline_exceeded", StatusCode::kDeadlineExceeded},
  };
  for (auto [n, c] : kCodes) {
    if (name == n) return c;
  }
  return StatusCode::kInternal;
}

// The server's error in a non-2xx answer.
Status ErrorFromAnswer(int http_status, const Json& j) {
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    return Status(CodeFromName(j["error"].value("code", "")), j["error"].value("message", ""));
  }
  return Internal("the server answered HTTP " + std::to_string(http_status));
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
    return FailedPrecondition("no server to talk to: start one with `tensorfleet up`, or pass "
                              "--server URL (or set TENSORFLEET_URL); looked for " + dir + "/url");
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

Result<Json> ApiClient::Call(const std::string& method, const std::string& target,
                             const Json& body, std::chrono::milliseconds timeout) {
  http::Headers headers = {{"Authorization", "Bearer " + token_}};
  std::string payload;
  if (!body.is_null()) {
    headers.emplace_back("Content-Type", "application/json");
    payload = body.dump();
  }
  auto response = client_->Send(method, target, headers, payload, timeout);
  if (!response.ok()) {
    return Status(response.status().code(), "cannot reach the tensorfleet server at " + server_ +
                                                 ": " + response.status().message());
  }
  Json j = Json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (response->status >= 200 && response->status < 300) {
    if (j.is_discarded()) return Internal("the server answered with something that is not JSON");
    return j;
  }
  return ErrorFromAnswer(response->status, j);
}

Result<http::ClientResponse> ApiClient::Exchange(http::ClientRequest request) {
  request.headers.emplace_back("Authorization", "Bearer " + token_);
  auto response = client_->Exchange(request);
  if (!response.ok()) {
    return Status(response.status().code(), "cannot reach the tensorfleet server at " + server_ +
                                                 ": " + response.status().message());
  }
  if (response->status >= 200 && response->status < 300) return response;
  return ErrorFromAnswer(response->status,
                         Json::parse(response->body, nullptr, /*allow_exceptions=*/false));
}

}  // namespace tf::cli
