#include "api/router.h"

#include <chrono>

#include "api/errors.h"
#include "base/log.h"

namespace tf::api {

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    out.push_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

void Router::Add(const std::string& method, const std::string& pattern, RouteHandler handler,
                 Access access) {
  routes_.push_back(Route{method, pattern, SplitPath(pattern), std::move(handler), access});
}

bool Router::Match(const Route& route, const std::vector<std::string>& segments,
                   std::map<std::string, std::string>& params) {
  if (route.segments.size() != segments.size()) return false;
  std::map<std::string, std::string> captured;
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string& p = route.segments[i];
    if (p.size() > 2 && p.front() == '{' && p.back() == '}') {
      if (segments[i].empty()) return false;
      captured[p.substr(1, p.size() - 2)] = segments[i];
    } else if (p != segments[i]) {
      return false;
    }
  }
  params = std::move(captured);
  return true;
}

awaitable<http::Response> Router::Handle(http::Request& request) {
  auto start = std::chrono::steady_clock::now();
  auto segments = SplitPath(request.path);
  const Route* found = nullptr;
  bool path_known = false;
  std::map<std::string, std::string> params;
  for (const Route& r : routes_) {
    std::map<std::string, std::string> p;
    if (!Match(r, segments, p)) continue;
    path_known = true;
    if (r.method == request.method) {
      found = &r;
      params = std::move(p);
      break;
    }
  }

  http::Response response;
  std::string route_label = found ? found->pattern : "unmatched";
  if (found == nullptr) {
    response = path_known
                   ? ErrorResponse({StatusCode::kInvalidArgument,
                                    "method " + request.method + " is not allowed on " + request.path})
                   : ErrorResponse(NotFound("no such endpoint: " + request.method + " " + request.path));
    if (path_known) response.status = 405;
  } else {
    Context ctx{request, std::move(params), {}};
    Status denied;
    if (found->access != Access::kPublic) {
      std::string auth = request.Header("Authorization");
      std::string secret;
      if (auth.rfind("Bearer ", 0) == 0) secret = auth.substr(7);
      auto principal = co_await RunBlocking(pool_, [&] { return auth_.Authenticate(secret); });
      if (!principal.ok()) {
        denied = principal.status();
      } else {
        ctx.principal = std::move(*principal);
        if (found->access == Access::kAdmin && !ctx.principal.admin) {
          denied = PermissionDenied("this needs an admin token");
        }
      }
    }
    if (!denied.ok()) {
      response = ErrorResponse(denied);
    } else {
      response = co_await found->handler(ctx);
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics_.ObserveRequest(route_label, request.method, response.status, seconds);
  co_return response;
}

}  // namespace tf::api
