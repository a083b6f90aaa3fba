#include "client/json_client.h"

#include "client/bearer.h"

namespace tf::client {

using nlohmann::json;

Status StatusFromErrorBody(int http_status, std::string_view body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    std::string code =
        e.contains("code") && e["code"].is_string() ? e["code"].get<std::string>() : "";
    std::string message =
        e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : "";
    return Status(StatusCodeFromName(code), message);
  }
  return Internal("the server answered HTTP " + std::to_string(http_status));
}

Result<std::unique_ptr<JsonClient>> JsonClient::Create(const std::string& base_url,
                                                       std::string token) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<http::Client> client, http::Client::Create(base_url));
  return std::unique_ptr<JsonClient>(new JsonClient(base_url, std::move(token), std::move(client)));
}

Result<json> JsonClient::Call(const std::string& method, const std::string& target,
                              const json& body, std::chrono::milliseconds timeout) {
  http::Headers headers = {{"Authorization", BearerToken(token_)}};
  std::string payload;
  if (!body.is_null()) {
    headers.push_back({"Content-Type", "application/json"});
    payload = body.dump();
  }
  TF_ASSIGN_OR_RETURN(http::ClientResponse response,
                      client_->Send(method, target, headers, payload, timeout));
  if (response.status < 200 || response.status > 299) {
    return StatusFromErrorBody(response.status, response.body);
  }
  if (response.body.empty()) return json(nullptr);
  json parsed = json::parse(response.body, nullptr, false);
  if (parsed.is_discarded()) return Internal("the server's answer to " + target + " is not JSON");
  return parsed;
}

}  // namespace tf::client
