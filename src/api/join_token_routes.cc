// /v1/join-tokens: what lets a new worker register its node (auth/worker_auth.cc), for admins.
#include "api/errors.h"
#include "api/json_body.h"
#include "api/services.h"
#include "base/time_format.h"
#include "store/join_token_rule.h"

namespace tf::api {
namespace {

constexpr int64_t kDefaultJoinTtlSeconds = int64_t{24} * 3600;

Json JoinTokenToJson(const store::JoinToken& t, TimeMs now) {
  Status usable =
      store::JoinTokenUsable(t.id, t.revoked_at.has_value(), t.expires_at, t.max_uses, t.uses, now);
  std::string state = "usable";
  if (t.revoked_at) {
    state = "revoked";
  } else if (now >= t.expires_at) {
    state = "expired";
  } else if (!usable.ok()) {
    state = "used up";
  }
  return {{"id", t.id},
          {"name", t.name},
          {"state", state},
          {"created_at", FormatTime(t.created_at)},
          {"expires_at", FormatTime(t.expires_at)},
          {"max_uses", t.max_uses},
          {"uses", t.uses},
          {"revoked_at", t.revoked_at ? Json(FormatTime(*t.revoked_at)) : Json(nullptr)}};
}

}  // namespace

void AddJoinTokenRoutes(Router& router, Services& s) {
  router.Add(
      "GET", "/v1/join-tokens",
      [&s](Context&) -> awaitable<http::Response> {
        auto list = co_await RunBlocking(s.pool, [&] { return s.auth.ListJoinTokens(); });
        if (!list.ok()) co_return ErrorResponse(list.status());
        Json out = Json::array();
        for (const auto& t : *list) out.push_back(JoinTokenToJson(t, s.clock.Now()));
        co_return JsonResponse(200, {{"join_tokens", out}});
      },
      Access::kAdmin);

  // {"name": "gpu-rack-2", "ttl_seconds": 86400, "max_uses": 0}
  router.Add(
      "POST", "/v1/join-tokens",
      [&s](Context& ctx) -> awaitable<http::Response> {
        auto body = ParseJsonObject(ctx.request.body);
        if (!body.ok()) co_return ErrorResponse(body.status());
        FieldReader r(*body);
        std::string name = r.Required(r.String("name"), "name");
        int64_t ttl_seconds = r.Int("ttl_seconds").value_or(kDefaultJoinTtlSeconds);
        int64_t max_uses = r.Int("max_uses").value_or(0);
        if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
        if (ttl_seconds < 0 || ttl_seconds > INT64_MAX / 1000) {
          co_return ErrorResponse(InvalidArgument("'ttl_seconds': must be positive"));
        }
        auto issued = co_await RunBlocking(
            s.pool, [&] { return s.auth.CreateJoinToken(name, ttl_seconds * 1000, max_uses); });
        if (!issued.ok()) co_return ErrorResponse(issued.status());
        Json j = JoinTokenToJson(issued->token, s.clock.Now());
        j["secret"] = issued->secret;
        co_return JsonResponse(201, j);
      },
      Access::kAdmin);

  router.Add(
      "DELETE", "/v1/join-tokens/{id}",
      [&s](Context& ctx) -> awaitable<http::Response> {
        std::string id = ctx.Param("id");
        Status st = co_await RunBlocking(s.pool, [&] { return s.auth.RevokeJoinToken(id); });
        if (!st.ok()) co_return ErrorResponse(st);
        co_return JsonResponse(200, {{"revoked", id}});
      },
      Access::kAdmin);
}

}  // namespace tf::api
