// /v1/budgets: PUT, GET and DELETE /v1/budgets/{name}, GET /v1/budgets with each budget's
// spend, forecast and period now, and GET /v1/budgets/alerts?after=SEQ.
#include "api/budget_routes.h"

#include <charconv>
#include <map>

#include "api/errors.h"
#include "api/json_body.h"
#include "base/time_format.h"

namespace tf::api {
namespace {

constexpr int kDefaultAlertLimit = 100;
constexpr int kMaxAlertLimit = 1000;

struct Scope {
  std::string project_id;                    // "" = every project (admin, ?all=true)
  std::map<std::string, std::string> names;  // project id -> name, for the answer
};

// The project(s) a request acts on: the token's own; for an admin, ?project=NAME or ?all=true.
Result<Scope> ScopeOf(Services& s, Context& ctx) {
  const auto& q = ctx.request.query;
  const bool all = q.count("all") && q.at("all") != "false" && q.at("all") != "0";
  const std::string project = q.count("project") ? q.at("project") : "";
  const auth::Principal& who = ctx.principal;
  Scope scope;
  if (all || (!project.empty() && project != who.project_name)) {
    if (!who.admin) {
      return PermissionDenied("only an admin token may act on another project's budgets");
    }
  }
  TF_ASSIGN_OR_RETURN(auto projects, s.auth.ListProjects());
  for (const auto& p : projects) scope.names[p.id] = p.name;
  if (all) return scope;
  if (project.empty() || project == who.project_name) {
    scope.project_id = who.project_id;
    scope.names[who.project_id] = who.project_name;
    return scope;
  }
  auto target = s.auth.GetProjectByName(project);
  if (!target.ok() && target.status().code() == StatusCode::kNotFound) {
    return NotFound("project '" + project + "' does not exist");
  }
  if (!target.ok()) return target.status();
  scope.project_id = target->id;
  return scope;
}

Json OrNull(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json BudgetViewToJson(const cost::BudgetView& v, const std::string& project_name) {
  Json j = cost::BudgetToJson(v.budget);
  j["id"] = v.record.id;
  j["name"] = v.record.name;
  j["project"] = project_name;
  j["created_at"] = FormatTime(v.record.created_at);
  j["updated_at"] = FormatTime(v.record.updated_at);
  if (!j.contains("webhook")) j["webhook"] = nullptr;
  const cost::BudgetStatus& st = v.status;
  j["current"] = {{"period_start", FormatTime(st.period.start)},
                  {"period_end", FormatTime(st.period.end)},
                  {"spend", st.spend},
                  {"percent", st.percent},
                  {"forecast", OrNull(st.forecast)},
                  {"forecast_percent", OrNull(st.forecast_percent)},
                  {"state", cost::BudgetStateName(st.state)}};
  return j;
}

// "none" (no webhook), "pending", "delivered" or "failed" (given up).
const char* DeliveryState(const store::BudgetAlert& a) {
  if (a.delivered_at) return "delivered";
  if (a.next_delivery_at) return "pending";
  if (a.delivery_attempts > 0) return "failed";
  return "none";
}

Json AlertToJson(const store::BudgetAlert& a, const std::string& budget_name,
                 const std::string& project_name) {
  return {{"seq", a.seq},
          {"budget", budget_name},
          {"budget_id", a.budget_id},
          {"project", project_name},
          {"kind", a.kind},
          {"threshold", a.threshold},
          {"spend", a.spend},
          {"amount", a.amount},
          {"period_start", FormatTime(a.period_start)},
          {"fired_at", FormatTime(a.fired_at)},
          {"message", a.message},
          {"delivery",
           {{"state", DeliveryState(a)},
            {"attempts", a.delivery_attempts},
            {"delivered_at", a.delivered_at ? Json(FormatTime(*a.delivered_at)) : Json(nullptr)},
            {"next_attempt_at",
             a.next_delivery_at ? Json(FormatTime(*a.next_delivery_at)) : Json(nullptr)},
            {"last_error", a.last_error.empty() ? Json(nullptr) : Json(a.last_error)}}}};
}

// A query parameter that must be a whole number in [low, high]; `fallback` when absent.
Result<int64_t> QueryInt(Context& ctx, const std::string& name, int64_t fallback, int64_t low,
                         int64_t high) {
  const auto& q = ctx.request.query;
  auto it = q.find(name);
  if (it == q.end() || it->second.empty()) return fallback;
  int64_t v = 0;
  const std::string& text = it->second;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (err != std::errc() || end != text.data() + text.size() || v < low || v > high) {
    return InvalidArgument("query parameter '" + name + "' must be a whole number from " +
                           std::to_string(low) + " to " + std::to_string(high) + ", got '" + text +
                           "'");
  }
  return v;
}

}  // namespace

void AddBudgetRoutes(Router& router, Services& s, cost::BudgetService& budgets,
                     std::function<void()> changed) {
  // Before /v1/budgets/{name}: the first matching route wins (and "alerts" is no budget name).
  router.Add(
      "GET", "/v1/budgets/alerts", [&s, &budgets](Context& ctx) -> awaitable<http::Response> {
        auto after = QueryInt(ctx, "after", 0, 0, INT64_MAX);
        if (!after.ok()) co_return ErrorResponse(after.status());
        auto limit = QueryInt(ctx, "limit", kDefaultAlertLimit, 1, kMaxAlertLimit);
        if (!limit.ok()) co_return ErrorResponse(limit.status());
        auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
          TF_ASSIGN_OR_RETURN(Scope scope, ScopeOf(s, ctx));
          TF_ASSIGN_OR_RETURN(auto alerts,
                              budgets.Alerts(scope.project_id, *after, static_cast<int>(*limit)));
          std::map<std::string, std::string> budget_names;  // id -> name
          TF_ASSIGN_OR_RETURN(auto records, s.store.budgets().ListBudgets(scope.project_id));
          for (const auto& r : records) budget_names[r.id] = r.name;
          Json out = Json::array();
          int64_t last = *after;
          for (const auto& a : alerts) {
            out.push_back(AlertToJson(a, budget_names[a.budget_id], scope.names[a.project_id]));
            last = std::max(last, a.seq);
          }
          return Json{{"alerts", out}, {"next_after", last}};
        });
        if (!result.ok()) co_return ErrorResponse(result.status());
        co_return JsonResponse(200, *result);
      });

  router.Add("GET", "/v1/budgets", [&s, &budgets](Context& ctx) -> awaitable<http::Response> {
    auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
      TF_ASSIGN_OR_RETURN(Scope scope, ScopeOf(s, ctx));
      TF_ASSIGN_OR_RETURN(auto views, budgets.List(scope.project_id));
      Json out = Json::array();
      for (const auto& v : views)
        out.push_back(BudgetViewToJson(v, scope.names[v.record.project_id]));
      return Json{{"budgets", out}};
    });
    if (!result.ok()) co_return ErrorResponse(result.status());
    co_return JsonResponse(200, *result);
  });

  router.Add("GET", "/v1/budgets/{name}",
             [&s, &budgets](Context& ctx) -> awaitable<http::Response> {
               auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
                 TF_ASSIGN_OR_RETURN(Scope scope, ScopeOf(s, ctx));
                 if (scope.project_id.empty())
                   return InvalidArgument("name one project, not all=true");
                 TF_ASSIGN_OR_RETURN(auto view, budgets.Get(scope.project_id, ctx.Param("name")));
                 return BudgetViewToJson(view, scope.names[scope.project_id]);
               });
               if (!result.ok()) co_return ErrorResponse(result.status());
               co_return JsonResponse(200, *result);
             });

  // The body is the budget document (cost/budget.h).
  router.Add("PUT", "/v1/budgets/{name}",
             [&s, &budgets, changed](Context& ctx) -> awaitable<http::Response> {
               auto body = ParseJsonObject(ctx.request.body);
               if (!body.ok()) co_return ErrorResponse(body.status());
               bool created = false;
               auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
                 TF_ASSIGN_OR_RETURN(Scope scope, ScopeOf(s, ctx));
                 if (scope.project_id.empty())
                   return InvalidArgument("name one project, not all=true");
                 TF_ASSIGN_OR_RETURN(
                     auto view, budgets.Put(scope.project_id, ctx.Param("name"), *body, &created));
                 return BudgetViewToJson(view, scope.names[scope.project_id]);
               });
               if (!result.ok()) co_return ErrorResponse(result.status());
               if (changed) changed();
               co_return JsonResponse(created ? 201 : 200, *result);
             });

  router.Add("DELETE", "/v1/budgets/{name}",
             [&s, &budgets](Context& ctx) -> awaitable<http::Response> {
               Status st = co_await RunBlocking(s.pool, [&]() -> Status {
                 TF_ASSIGN_OR_RETURN(Scope scope, ScopeOf(s, ctx));
                 if (scope.project_id.empty())
                   return InvalidArgument("name one project, not all=true");
                 return budgets.Delete(scope.project_id, ctx.Param("name"));
               });
               if (!st.ok()) co_return ErrorResponse(st);
               co_return JsonResponse(200, {{"deleted", ctx.Param("name")}});
             });
}

}  // namespace tf::api
