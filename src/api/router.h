// Routes: (method, path pattern) -> handler, with authentication in front of every route that
// is not marked public. Patterns are literal segments and {name} captures: "/v1/queues/{name}".
// A last segment {name+} captures the rest of the path, slashes and empty segments included
// ("/v1/buckets/{bucket}/objects/{key+}" gives key "a//b/" for ".../objects/a//b/").
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <boost/asio/thread_pool.hpp>

#include "api/metrics.h"
#include "auth/auth_service.h"
#include "base/async.h"
#include "http/http.h"

namespace tf::api {

struct Context {
  http::Request& request;
  std::map<std::string, std::string> params;  // captured path segments, decoded
  auth::Principal principal;                  // empty for public routes

  const std::string& Param(const std::string& name) { return params[name]; }
};

using RouteHandler = std::function<awaitable<http::Response>(Context&)>;

enum class Access { kPublic, kProject, kAdmin };

// kStreamed: the handler reads the body itself from request.body_reader (large uploads).
enum class Body { kBuffered, kStreamed };

class Router {
 public:
  Router(auth::AuthService& auth, asio::thread_pool& pool, Metrics& metrics)
      : auth_(auth), pool_(pool), metrics_(metrics) {}

  void Add(const std::string& method, const std::string& pattern, RouteHandler handler,
           Access access = Access::kProject, Body body = Body::kBuffered);

  // Whether the route a request's head goes to streams its body: the server's
  // ServerOptions::stream_body.
  bool StreamsBody(const http::Request& head) const;

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
  };
  static bool Match(const Route& route, const std::string& path,
                    const std::vector<std::string>& segments,
                    std::map<std::string, std::string>& params);
  // The route for `method` on `path`; null if none. *path_known: some route has this path.
  const Route* Find(const std::string& method, const std::string& path, bool* path_known,
                    std::map<std::string, std::string>* params) const;

  auth::AuthService& auth_;
  asio::thread_pool& pool_;
  Metrics& metrics_;
  std::vector<Route> routes_;  // fixed before serving starts
};

// Splits "/v1/queues/a" into {"v1", "queues", "a"}.
std::vector<std::string> SplitPath(const std::string& path);

}  // namespace tf::api
