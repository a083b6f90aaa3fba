#include "api/router.h"

#include <algorithm>
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

namespace {

// The offset in `path` just past its n-th non-empty segment (n >= 1), as SplitPath counts them.
size_t EndOfSegment(const std::string& path, size_t n) {
  size_t i = 0;
  for (size_t seen = 0; i < path.size();) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    i = std::min(path.find('/', i), path.size());
    if (++seen == n) break;
  }
  return i;
}

}  // namespace

void Router::Add(const std::string& method, const std::string& pattern, RouteHandler handler,
                 Access access, Body body) {
  Route route{method, pattern, SplitPath(pattern), std::move(handler), access, body};
  const std::string& last = route.segments.empty() ? pattern : route.segments.back();
  route.rest = last.size() > 3 && last.front() == '{' && last.ends_with("+}");
  routes_.push_back(std::move(route));
}

void Router::SetHandlerTimeout(const std::string& method, const std::string& pattern,
                               std::chrono::milliseconds timeout) {
  for (Route& route : routes_) {
    if (route.method == method && route.pattern == pattern) route.handler_timeout = timeout;
  }
}

bool Router::Match(const Route& route, const std::string& path,
                   const std::vector<std::string>& segments,
                   std::map<std::string, std::string>& params) {
  const size_t fixed = route.segments.size() - (route.rest ? 1 : 0);
  if (route.rest ? segments.size() <= fixed : segments.size() != fixed) return false;
  std::map<std::string, std::string> captured;
  for (size_t i = 0; i < fixed; ++i) {
    const std::string& p = route.segments[i];
    if (p.size() > 2 && p.front() == '{' && p.back() == '}') {
      if (segments[i].empty()) return false;
      captured[p.substr(1, p.size() - 2)] = segments[i];
    } else if (p != segments[i]) {
      return false;
    }
  }
  if (route.rest) {
    // Everything after the fixed segments and the one '/' that follows them.
    const std::string& p = route.segments.back();
    captured[p.substr(1, p.size() - 3)] = path.substr(EndOfSegment(path, fixed) + 1);
  }
  params = std::move(captured);
  return true;
}

const Router::Route* Router::Find(const std::string& method, const std::string& path,
                                  bool* path_known,
                                  std::map<std::string, std::string>* params) const {
  auto segments = SplitPath(path);
  *path_known = false;
  for (const Route& r : routes_) {
    std::map<std::string, std::string> p;
    if (!Match(r, path, segments, p)) continue;
    *path_known = true;
    if (r.method == method) {
      *params = std::move(p);
      return &r;
    }
  }
  return nullptr;
}

const Fallback* Router::FallbackClaiming(const http::Request& head, bool path_known) const {
  if (path_known) return nullptr;
  for (const Fallback& f : fallbacks_) {
    if (f.handler && f.claims && f.claims(head)) return &f;
  }
  return nullptr;
}

const Fallback* Router::FallbackClaimingFirst(const http::Request& head) const {
  for (const Fallback& f : fallbacks_) {
    if (f.handler && f.claims_first && f.claims_first(head)) return &f;
  }
  return nullptr;
}

bool Router::StreamsBody(const http::Request& head) const {
  if (const Fallback* f = FallbackClaimingFirst(head)) return f->streams_body(head);
  bool path_known;
  std::map<std::string, std::string> params;
  const Route* route = Find(head.method, head.path, &path_known, &params);
  if (route == nullptr) {
    if (const Fallback* f = FallbackClaiming(head, path_known)) return f->streams_body(head);
  }
  return route != nullptr && route->body == Body::kStreamed;
}

std::optional<std::chrono::milliseconds> Router::HandlerTimeout(const http::Request& head) const {
  if (FallbackClaimingFirst(head) != nullptr) return std::nullopt;
  bool path_known;
  std::map<std::string, std::string> params;
  const Route* route = Find(head.method, head.path, &path_known, &params);
  return route != nullptr ? route->handler_timeout : std::nullopt;
}

std::optional<http::Response> Router::Refusal(const http::Request& head, int status,
                                              std::string_view message) const {
  const Fallback* f = FallbackClaimingFirst(head);
  if (f == nullptr) {
    bool path_known = false;
    std::map<std::string, std::string> params;
    if (Find(head.method, head.path, &path_known, &params) != nullptr) return std::nullopt;
    f = FallbackClaiming(head, path_known);
  }
  if (f == nullptr || !f->error_response) return std::nullopt;
  return f->error_response(head, status, message);
}

awaitable<http::Response> Router::Handle(http::Request& request) {
  auto start = std::chrono::steady_clock::now();
  bool path_known = false;
  std::map<std::string, std::string> params;
  const Fallback* fallback = FallbackClaimingFirst(request);
  const Route* found =
      fallback != nullptr ? nullptr : Find(request.method, request.path, &path_known, &params);
  if (fallback == nullptr && found == nullptr) fallback = FallbackClaiming(request, path_known);

  http::Response response;
  std::string route_label = found ? found->pattern : "unmatched";
  if (fallback != nullptr) {
    route_label = fallback->label;
    response = co_await fallback->handler(request);
  } else if (found == nullptr) {
    response =
        path_known
            ? ErrorResponse({StatusCode::kInvalidArgument,
                             "method " + request.method + " is not allowed on " + request.path})
            : ErrorResponse(NotFound("no such endpoint: " + request.method + " " + request.path));
    if (path_known) response.status = 405;
  } else {
    Context ctx{request, std::move(params), {}};
    Status denied;
    std::string secret(http::BearerCredentials(request.Header("Authorization")));
    if (found->access == Access::kWorker) {
      auto worker = co_await RunBlocking(pool_, [&] { return auth_.AuthenticateWorker(secret); });
      if (worker.ok()) {
        ctx.worker = std::move(*worker);
      } else {
        denied = worker.status();
      }
    } else if (found->access != Access::kPublic) {
      // A token checked moments ago is answered from the cache here, on the network thread.
      // (No co_await inside ?: here: g++ 12 mishandles the temporaries of such an expression.)
      std::optional<auth::Principal> cached = auth_.CachedPrincipal(secret);
      Result<auth::Principal> principal = Unauthenticated("not checked");
      if (cached) {
        principal = std::move(*cached);
      } else {
        principal = co_await RunBlocking(pool_, [&] { return auth_.Authenticate(secret); });
      }
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
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics_.ObserveRequest(route_label, request.method, response.status, seconds);
  co_return response;
}

}  // namespace tf::api
