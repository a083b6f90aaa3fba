// /v1/projects and /v1/tokens.
#include "api/errors.h"
#include "api/json_body.h"
#include "api/project_scope.h"
#include "api/services.h"
#include "base/time_format.h"

namespace tf::api {
namespace {

Json ProjectToJson(const store::Project& p) {
  return {{"id", p.id}, {"name", p.name}, {"created_at", FormatTime(p.created_at)}};
}

Json TokenToJson(const store::Token& t, const std::string& project_name) {
  return {{"id", t.id},
          {"name", t.name},
          {"project", project_name},
          {"admin", t.admin},
          {"created_at", FormatTime(t.created_at)},
          {"revoked_at", t.revoked_at ? Json(FormatTime(*t.revoked_at)) : Json(nullptr)}};
}

}  // namespace

void AddAuthRoutes(Router& router, Services& s) {
  router.Add(
      "GET", "/v1/projects",
      [&s](Context&) -> awaitable<http::Response> {
        auto list = co_await RunBlocking(s.pool, [&] { return s.auth.ListProjects(); });
        if (!list.ok()) co_return ErrorResponse(list.status());
        Json out = Json::array();
        for (const auto& p : *list) out.push_back(ProjectToJson(p));
        co_return JsonResponse(200, {{"projects", out}});
      },
      Access::kAdmin);

  router.Add(
      "POST", "/v1/projects",
      [&s](Context& ctx) -> awaitable<http::Response> {
        auto body = ParseJsonObject(ctx.request.body);
        if (!body.ok()) co_return ErrorResponse(body.status());
        FieldReader r(*body);
        std::string name = r.Required(r.String("name"), "name");
        if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
        auto p = co_await RunBlocking(s.pool, [&] { return s.auth.CreateProject(name); });
        if (!p.ok()) co_return ErrorResponse(p.status());
        co_return JsonResponse(201, ProjectToJson(*p));
      },
      Access::kAdmin);

  router.Add("GET", "/v1/tokens", [&s](Context& ctx) -> awaitable<http::Response> {
    auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
      TF_ASSIGN_OR_RETURN(ListingScope scope,
                          ListingScopeOf(s.auth, ctx.principal, ctx.request.query, "tokens"));
      TF_ASSIGN_OR_RETURN(auto tokens, s.auth.ListTokens(scope.project_id));
      Json out = Json::array();
      for (const auto& t : tokens) out.push_back(TokenToJson(t, scope.names[t.project_id]));
      return Json{{"tokens", out}};
    });
    if (!result.ok()) co_return ErrorResponse(result.status());
    co_return JsonResponse(200, *result);
  });

  router.Add("POST", "/v1/tokens", [&s](Context& ctx) -> awaitable<http::Response> {
    auto body = ParseJsonObject(ctx.request.body);
    if (!body.ok()) co_return ErrorResponse(body.status());
    FieldReader r(*body);
    std::string name = r.Required(r.String("name"), "name");
    std::string project = r.String("project").value_or("");
    bool admin = r.Bool("admin").value_or(false);
    if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
    if (admin && !ctx.principal.admin) {
      co_return ErrorResponse(PermissionDenied("only an admin token may create admin tokens"));
    }
    auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
      TF_ASSIGN_OR_RETURN(auto target, TargetProject(s.auth, ctx.principal, project));
      TF_ASSIGN_OR_RETURN(auto issued, s.auth.CreateToken(target.id, name, admin));
      Json j = TokenToJson(issued.token, target.name);
      j["secret"] = issued.secret;
      return j;
    });
    if (!result.ok()) co_return ErrorResponse(result.status());
    co_return JsonResponse(201, *result);
  });

  router.Add("DELETE", "/v1/tokens/{id}", [&s](Context& ctx) -> awaitable<http::Response> {
    std::string id = ctx.Param("id");
    Status st = co_await RunBlocking(s.pool, [&]() -> Status {
      if (!ctx.principal.admin) {
        // A project token may revoke only its own project's tokens; others look absent.
        TF_ASSIGN_OR_RETURN(auto tokens, s.auth.ListTokens(ctx.principal.project_id));
        bool mine = false;
        for (const auto& t : tokens) mine = mine || t.id == id;
        if (!mine) return NotFound("token " + id + " does not exist");
      }
      return s.auth.RevokeToken(id);
    });
    if (!st.ok()) co_return ErrorResponse(st);
    co_return JsonResponse(200, {{"revoked", id}});
  });
}

}  // namespace tf::api
