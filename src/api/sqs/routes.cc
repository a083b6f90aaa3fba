// The SQS API's requests: which ones are SQS's (before any route: their paths are queue URLs,
// which S3 would take for buckets), their signature (service "sqs"), their protocol (JSON 1.0 or
// Query) in and out, and the server's own refusals in SQS's form.
#include "api/sqs/sqs_api.h"
#include "base/crypto.h"
#include "http/url.h"
#include "s3/request_auth.h"
#include "sqs/names.h"
#include "sqs/query_protocol.h"

namespace tf::api {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kTargetPrefix = "AmazonSQS.";

bool IsJsonProtocol(const http::Request& head) {
  return head.Header("X-Amz-Target").rfind(kTargetPrefix, 0) == 0;
}

// SQS's requests: the JSON protocol's target, or a signature for service "sqs".
bool IsSqsRequest(const http::Request& head) {
  if (IsJsonProtocol(head)) return true;
  const std::string& auth = head.Header("Authorization");
  if (auth.find("/sqs/aws4_request") != std::string::npos) return true;
  auto it = head.query.find("X-Amz-Credential");
  return it != head.query.end() && it->second.find("/sqs/aws4_request") != std::string::npos;
}

// A refused signature, in SQS's names (it calls an unknown key InvalidClientTokenId).
sqs::Error AuthError(const s3::Error& e) {
  std::string code = e.code == "InvalidAccessKeyId" ? "InvalidClientTokenId" : e.code;
  std::string message =
      e.code == "InvalidAccessKeyId"
          ? "The security token included in the request is invalid (no such access key: "
            "`tensorfleet s3 key create` makes one)."
          : e.message;
  sqs::Error out = sqs::MakeError(code, message, e.status >= 500 ? e.status : 403);
  if (e.code == "AuthorizationHeaderMalformed" || e.code == "InvalidRequest" ||
      e.code == "AuthorizationQueryParametersError") {
    out.status = 400;
    out.type = out.query_code = "IncompleteSignature";
  }
  return out;
}

http::Response Answer(bool json, const std::string& action, SqsResult result,
                      const std::string& request_id) {
  http::Response r;
  if (result.ok()) {
    r.status = 200;
    if (json) {
      r.content_type = "application/x-amz-json-1.0";
      r.body = result->dump(-1, ' ', false, Json::error_handler_t::replace);
    } else {
      r.content_type = "text/xml";
      r.body = sqs::ToQueryXml(action, *result, request_id);
    }
  } else {
    const sqs::Error& e = result.error();
    r.status = e.status;
    if (json) {
      r.content_type = "application/x-amz-json-1.0";
      r.body = sqs::ErrorJson(e);
      r.headers.emplace_back("x-amzn-query-error", sqs::QueryErrorHeader(e));
    } else {
      r.content_type = "text/xml";
      r.body = sqs::ErrorXml(e, request_id);
    }
  }
  r.headers.emplace_back("x-amzn-RequestId", request_id);
  return r;
}

std::string NewRequestId() {
  const std::string h = RandomHex(16);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

awaitable<http::Response> Handle(SqsApi& api, http::Request& request) {
  const std::string request_id = NewRequestId();
  const bool json = IsJsonProtocol(request);
  std::string action;
  Json params = Json::object();
  if (json) {
    action = request.Header("X-Amz-Target").substr(kTargetPrefix.size());
  }
  Services& s = api.services;
  // A key checked moments ago is verified here, on the network thread; otherwise on the pool,
  // where the store may be read.
  bool uncached = false;
  auto verify = [&](bool may_block) {
    return s3::VerifyRequest(
        request, s.clock.Now(),
        [&](const std::string& id) -> Result<store::AccessKey> {
          if (may_block) return api.keys.FindActive(id);
          if (auto key = api.keys.CachedActive(id)) return *std::move(key);
          uncached = true;
          return Unavailable("not cached");
        },
        "sqs");
  };
  auto verified = verify(/*may_block=*/false);
  if (uncached) verified = co_await RunBlocking(s.pool, [&] { return verify(true); });
  if (!verified.ok()) co_return Answer(json, action, AuthError(verified.error()), request_id);
  if (verified->payload == s3::Payload::kSha256 &&
      Sha256Hex(request.body) != verified->payload_sha256) {
    co_return Answer(
        json, action,
        sqs::MakeError("SignatureDoesNotMatch",
                       "The body's SHA-256 is not the x-amz-content-sha256 signed.", 403),
        request_id);
  }

  if (json) {
    if (!request.body.empty()) {
      params = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
      if (!params.is_object()) {
        co_return Answer(
            json, action,
            sqs::MakeError("SerializationException", "The request body is not a JSON object."),
            request_id);
      }
    }
  } else {
    std::map<std::string, std::string> form = request.query;
    if (request.method == "POST") {
      for (auto& [name, value] : http::ParseQuery(request.body)) form[name] = std::move(value);
    }
    auto parsed = sqs::FromQueryParams(form);
    if (!parsed.ok()) {
      co_return Answer(json, action, sqs::InvalidParameterValue(parsed.status().message()),
                       request_id);
    }
    action = parsed->action;
    params = std::move(parsed->params);
    if (action.empty()) {
      co_return Answer(json, action, sqs::MissingParameter("Action"), request_id);
    }
  }

  auto authorization = s3::ParseAuthorization(request.Header("Authorization"));
  SqsCall call{api, request, action, std::move(params), verified->key.project_id, {}, "", ""};
  call.naming.account = sqs::AccountIdOf(call.project_id);
  call.naming.region = authorization.ok() ? authorization->credential.region : "us-east-1";
  const std::string& host = request.Header("Host");
  call.base_url = "http://" + (host.empty() ? std::string("localhost") : host);
  if (!request.path.empty() && request.path != "/") call.path_url = call.base_url + request.path;
  SqsResult result = co_await RunSqsAction(call);
  if (json && !result.ok() && result.error().type == "InvalidAction") {
    sqs::Error e = result.error();
    e.type = "UnknownOperationException";
    e.message = "The operation " + action + " is not known to this endpoint.";
    co_return Answer(json, action, e, request_id);
  }
  co_return Answer(json, action, result, request_id);
}

// The server's own refusals (a body over the limit, a handler past its deadline, shutting down)
// in the protocol the request spoke.
http::Response Refusal(const http::Request& head, int status, std::string_view message) {
  const bool json = IsJsonProtocol(head);
  sqs::Error e =
      status == 413
          ? sqs::InvalidParameterValue("The request is too large: " + std::string(message))
      : status == 503 ? sqs::MakeError("ServiceUnavailable", std::string(message), 503)
                      : sqs::MakeError("InternalError", std::string(message), 500);
  return Answer(json, "", e, NewRequestId());
}

}  // namespace

void AddSqsRoutes(Router& router, Services& services) {
  auto api = std::make_shared<SqsApi>(services);
  router.AddFallback(Fallback{[](const http::Request&) { return false; },
                              [](const http::Request&) { return false; },
                              [api](http::Request& request) -> awaitable<http::Response> {
                                co_return co_await Handle(*api, request);
                              },
                              "sqs", IsSqsRequest, Refusal});
}

}  // namespace tf::api
