// Routes: (method, path pattern) -> handler, with authentication in front of every route that
// is not marked public. Patterns are literal segments and {name} captures: "/v1/queues/{name}".
// A last segment {name+} captures the rest of the path, slashes and empty segments included
// ("/v1/buckets/{bucket}/objects/{key+}" gives key "a//b/" for ".../objects/a//b/").
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/metrics.h"
#include "auth/auth_service.h"
#include "base/async.h"
#include "http/http.h"

namespace tf::api {

struct Context {
  http::Request& request;
  std::map<std::string, std::string> params;  // captured path segments, decoded
  auth::Principal principal;                  // empty for public and worker routes
  auth::WorkerPrincipal worker;               // for worker routes (Access::kWorker)

  const std::string& Param(const std::string& name) { return params[name]; }
};

using RouteHandler = std::function<awaitable<http::Response>(Context&)>;

// kWorker: the fleet's routes that workers call, open to an admin token, a join token or a
// node's credential (auth::WorkerPrincipal); the handler checks what the caller may do.
enum class Access { kPublic, kProject, kAdmin, kWorker };

// kStreamed: the handler reads the body itself from request.body_reader (large uploads).
enum class Body { kBuffered, kStreamed };

// Where requests go whose path no route knows, when `claims` takes them (S3's path-style
// addressing, api/s3/routes.cc), and those `claims_first` takes before any route (S3's
// virtual-hosted addressing; the SQS API's requests, api/sqs/). The handler authenticates them
// itself.
struct Fallback {
  std::function<bool(const http::Request& head)> claims;
  std::function<bool(const http::Request& head)> streams_body;  // as Router::StreamsBody
  std::function<awaitable<http::Response>(http::Request&)> handler;
  std::string label;  // the route label in metrics
  // Requests the fallback takes before any route is looked at, whatever their path (S3's
  // virtual-hosted requests, whose path is all key); none when unset.
  std::function<bool(const http::Request& head)> claims_first;
  // The server's own refusals of the requests it takes (http::ServerOptions::error_response), in
  // its protocol's form; the server's JSON when unset.
  std::function<http::Response(const http::Request& head, int status, std::string_view message)>
      error_response;
};

class Router {
 public:
  Router(auth::AuthService& auth, asio::thread_pool& pool, Metrics& metrics)
      : auth_(auth), pool_(pool), metrics_(metrics) {}

  void Add(const std::string& method, const std::string& pattern, RouteHandler handler,
           Access access = Access::kProject, Body body = Body::kBuffered);
  // The route's handler may run this long, instead of the server's handler_timeout (a handler
  // that bounds its own waits). Set before serving starts, after Add.
  void SetHandlerTimeout(const std::string& method, const std::string& pattern,
                         std::chrono::milliseconds timeout);
  // Set before serving starts. Fallbacks are asked in the order they were added: the first whose
  // claims_first takes a request gets it before any route; of those whose `claims` takes a
  // request no route knows the path of, the first gets it.
  void AddFallback(Fallback fallback) { fallbacks_.push_back(std::move(fallback)); }

  // Whether the route a request's head goes to streams its body: the server's
  // ServerOptions::stream_body.
  bool StreamsBody(const http::Request& head) const;
  // The route's own handler timeout (SetHandlerTimeout): the server's
  // ServerOptions::handler_timeout_for.
  std::optional<std::chrono::milliseconds> HandlerTimeout(const http::Request& head) const;
  // The server's own refusal of a request (ServerOptions::error_response): the fallback's, for
  // the requests it takes; nullopt for the server's JSON.
  std::optional<http::Response> Refusal(const http::Request& head, int status,
                                        std::string_view message) const;

  // 404 for an unknown path, 405 for a known path with another method, 401/403 from auth.
  awaitable<http::Response> Handle(http::Request& request);

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;
    RouteHandler handler;
    Access access;
    Body body;
    bool rest = false;  // the last segment is a {name+} capture
    std::optional<std::chrono::milliseconds> handler_timeout;
  };
  static bool Match(const Route& route, const std::string& path,
                    const std::vector<std::string>& segments,
                    std::map<std::string, std::string>& params);
  // The fallback that takes a request no route knows the path of; null if none.
  const Fallback* FallbackClaiming(const http::Request& head, bool path_known) const;
  // The fallback that takes a request before any route; null if none.
  const Fallback* FallbackClaimingFirst(const http::Request& head) const;
  // The route for `method` on `path`; null if none. *path_known: some route has this path.
  const Route* Find(const std::string& method, const std::string& path, bool* path_known,
                    std::map<std::string, std::string>* params) const;

  auth::AuthService& auth_;
  asio::thread_pool& pool_;
  Metrics& metrics_;
  std::vector<Route> routes_;        // fixed before serving starts
  std::vector<Fallback> fallbacks_;  // fixed before serving starts
};

// Splits "/v1/queues/a" into {"v1", "queues", "a"}.
std::vector<std::string> SplitPath(const std::string& path);

}  // namespace tf::api
