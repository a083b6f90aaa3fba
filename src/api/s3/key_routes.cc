// /v1/s3-keys: S3 access keys, made, listed and revoked with an API token. A project token acts
// on its own project's keys; an admin token may name another project.
#include "api/errors.h"
#include "api/json_body.h"
#include "api/project_scope.h"
#include "api/s3/s3_api.h"
#include "base/time_format.h"

namespace tf::api {
namespace {

Json KeyToJson(const store::AccessKey& k, const std::string& project_name) {
  return {{"id", k.id},
          {"name", k.name},
          {"project", project_name},
          {"created_at", FormatTime(k.created_at)},
          {"revoked_at", k.revoked_at ? Json(FormatTime(*k.revoked_at)) : Json(nullptr)}};
}

}  // namespace

void AddS3KeyRoutes(Router& router, S3Api& api) {
  Services& s = api.services;
  router.Add("POST", "/v1/s3-keys", [&s, &api](Context& ctx) -> awaitable<http::Response> {
    auto body = ParseJsonObject(ctx.request.body);
    if (!body.ok()) co_return ErrorResponse(body.status());
    FieldReader r(*body);
    std::string name = r.String("name").value_or("s3");
    std::string project = r.String("project").value_or("");
    if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
    auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
      TF_ASSIGN_OR_RETURN(auto target, TargetProject(s.auth, ctx.principal, project));
      TF_ASSIGN_OR_RETURN(auto key, api.keys.Create(target.id, name));
      Json j = KeyToJson(key, target.name);
      j["secret"] = key.secret;
      return j;
    });
    if (!result.ok()) co_return ErrorResponse(result.status());
    co_return JsonResponse(201, *result);
  });

  router.Add("GET", "/v1/s3-keys", [&s, &api](Context& ctx) -> awaitable<http::Response> {
    auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
      TF_ASSIGN_OR_RETURN(ListingScope scope,
                          ListingScopeOf(s.auth, ctx.principal, ctx.request.query, "access keys"));
      TF_ASSIGN_OR_RETURN(auto keys, api.keys.List(scope.project_id));
      Json out = Json::array();
      for (const auto& k : keys) out.push_back(KeyToJson(k, scope.names[k.project_id]));
      return Json{{"keys", out}};
    });
    if (!result.ok()) co_return ErrorResponse(result.status());
    co_return JsonResponse(200, *result);
  });

  router.Add("DELETE", "/v1/s3-keys/{id}", [&s, &api](Context& ctx) -> awaitable<http::Response> {
    std::string id = ctx.Param("id");
    Status st = co_await RunBlocking(s.pool, [&] {
      // A project token reaches only its own project's keys; others look absent.
      return api.keys.Revoke(ctx.principal.admin ? "" : ctx.principal.project_id, id);
    });
    if (!st.ok()) co_return ErrorResponse(st);
    co_return JsonResponse(200, {{"revoked", id}});
  });
}

}  // namespace tf::api
