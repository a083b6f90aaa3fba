// /v1/endpoints: create or update from a YAML spec, list, describe, scale, delete.
#include "api/endpoint_routes.h"

#include <cmath>
#include <map>

#include "api/errors.h"
#include "api/json_body.h"
#include "api/project_scope.h"
#include "base/time_format.h"
#include "cost/metering/metering_service.h"

namespace tf::api {
namespace {

using endpoints::ApplyOutcome;
using endpoints::EndpointView;

const char* OutcomeName(ApplyOutcome outcome) {
  switch (outcome) {
    case ApplyOutcome::kCreated:
      return "created";
    case ApplyOutcome::kUpdated:
      return "updated";
    case ApplyOutcome::kRescaled:
      return "rescaled";
    case ApplyOutcome::kUnchanged:
      return "unchanged";
  }
  return "?";
}

// The last few minutes of the endpoint's traffic through every server's gateway, and what its
// replicas cost over the same minutes (metering: their jobs are named ENDPOINT-rep_...).
Result<Json> TrafficJson(Services& s, const EndpointView& view,
                         const endpoints::TrafficView& traffic) {
  const TimeMs now = s.clock.Now();
  int servers = 0;
  TF_ASSIGN_OR_RETURN(endpoints::RecentSummary t, traffic.Summary(view.record.id, now, &servers));
  TF_ASSIGN_OR_RETURN(cost::Metering metered, cost::MeterJobs(s.store, view.record.project_id,
                                                              now - t.window_ms, now, now));
  const std::string replica_jobs = view.record.name + "-rep_";
  double dollars = 0;
  for (const cost::UsageLine& u : metered.usage) {
    if (u.job_name.starts_with(replica_jobs)) dollars += u.cost;
  }
  auto ms = [](double seconds) { return std::round(seconds * 1e4) / 10; };  // 0.1 ms
  return Json{
      {"window_seconds", t.window_ms / kSecondMs},
      {"servers", servers},
      {"requests", t.requests},
      {"errors", t.errors},
      {"requests_per_second", t.requests_per_second},
      {"latency_ms",
       {{"p50", ms(t.p50_seconds)}, {"p90", ms(t.p90_seconds)}, {"p99", ms(t.p99_seconds)}}},
      {"first_byte_ms_p50", ms(t.p50_first_byte_seconds)},
      {"completion_tokens", t.completion_tokens},
      {"tokens_per_second", t.tokens_per_second},
      {"replica_cost_usd", dollars},
      {"cost_per_million_tokens_usd",
       t.completion_tokens > 0 ? Json(dollars / static_cast<double>(t.completion_tokens) * 1e6)
                               : Json(nullptr)}};
}

}  // namespace

Json EndpointToJson(const EndpointView& view, const std::string& project_name) {
  const store::EndpointRecord& r = view.record;
  std::map<std::string, int> by_state;
  Json replicas = Json::array();
  for (const endpoints::Replica& rep : view.doc.replicas) {
    ++by_state[rep.state];
    replicas.push_back({{"id", rep.id},
                        {"generation", rep.generation},
                        {"state", rep.state},
                        {"job_id", rep.job_id},
                        {"node_id", rep.node_id},
                        {"address", rep.address},
                        {"since", FormatTime(rep.since)},
                        {"node_draining", rep.leaving}});
  }
  Json scaling = Json::array();
  for (const endpoints::ScalingEvent& e : view.doc.scaling) {
    scaling.push_back(
        {{"at", FormatTime(e.at)}, {"serving", e.serving}, {"warm", e.warm}, {"reason", e.reason}});
  }
  return {{"id", r.id},
          {"name", r.name},
          {"project", project_name},
          {"state", r.state},
          {"generation", view.doc.generation},
          {"created_at", FormatTime(r.created_at)},
          {"updated_at", FormatTime(r.updated_at)},
          {"spec", endpoints::EndpointSpecToJson(view.doc.spec)},
          {"replica_counts", by_state},
          {"replicas", std::move(replicas)},
          {"scaling", std::move(scaling)}};
}

void AddEndpointRoutes(Router& router, Services& s, endpoints::EndpointService& endpoints,
                       const endpoints::TrafficView& traffic,
                       const std::function<void()>& changed) {
  // {"spec": "<the YAML text>", "source": "chat.yaml"}: creates the endpoint the spec names,
  // or updates it.
  router.Add("POST", "/v1/endpoints",
             [&s, &endpoints, changed](Context& ctx) -> awaitable<http::Response> {
               auto body = ParseJsonObject(ctx.request.body);
               if (!body.ok()) co_return ErrorResponse(body.status());
               FieldReader r(*body);
               std::string text = r.Required(r.String("spec"), "spec");
               std::string source = r.String("source").value_or("spec.yaml");
               if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
               ApplyOutcome outcome = ApplyOutcome::kUnchanged;
               auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
                 TF_ASSIGN_OR_RETURN(endpoints::EndpointSpec spec,
                                     endpoints::ParseEndpointSpec(text, source));
                 TF_ASSIGN_OR_RETURN(EndpointView view,
                                     endpoints.Apply(ctx.principal.project_id, spec, &outcome));
                 Json out = EndpointToJson(view, ctx.principal.project_name);
                 out["outcome"] = OutcomeName(outcome);
                 return out;
               });
               if (!result.ok()) co_return ErrorResponse(result.status());
               changed();
               co_return JsonResponse(outcome == ApplyOutcome::kCreated ? 201 : 200, *result);
             });

  router.Add("GET", "/v1/endpoints", [&s, &endpoints](Context& ctx) -> awaitable<http::Response> {
    auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
      TF_ASSIGN_OR_RETURN(ListingScope scope,
                          ListingScopeOf(s.auth, ctx.principal, ctx.request.query, "endpoints"));
      TF_ASSIGN_OR_RETURN(auto views, endpoints.List(scope.project_id));
      Json out = Json::array();
      for (const EndpointView& v : views) {
        out.push_back(EndpointToJson(v, scope.names[v.record.project_id]));
      }
      return Json{{"endpoints", std::move(out)}};
    });
    if (!result.ok()) co_return ErrorResponse(result.status());
    co_return JsonResponse(200, *result);
  });

  router.Add("GET", "/v1/endpoints/{name}",
             [&s, &endpoints, &traffic](Context& ctx) -> awaitable<http::Response> {
               auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
                 TF_ASSIGN_OR_RETURN(EndpointView view,
                                     endpoints.Get(ctx.principal.project_id, ctx.Param("name")));
                 Json out = EndpointToJson(view, ctx.principal.project_name);
                 TF_ASSIGN_OR_RETURN(out["traffic"], TrafficJson(s, view, traffic));
                 return out;
               });
               if (!result.ok()) co_return ErrorResponse(result.status());
               co_return JsonResponse(200, *result);
             });

  // {"min": N, "max": M}, either or both.
  router.Add("POST", "/v1/endpoints/{name}/scale",
             [&s, &endpoints, changed](Context& ctx) -> awaitable<http::Response> {
               auto body = ParseJsonObject(ctx.request.body);
               if (!body.ok()) co_return ErrorResponse(body.status());
               FieldReader r(*body);
               auto min = r.Int32("min");
               auto max = r.Int32("max");
               Status read = r.Finish();
               if (read.ok() && !min.ok()) read = min.status();
               if (read.ok() && !max.ok()) read = max.status();
               if (!read.ok()) co_return ErrorResponse(read);
               auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
                 TF_ASSIGN_OR_RETURN(
                     EndpointView view,
                     endpoints.Scale(ctx.principal.project_id, ctx.Param("name"), *min, *max));
                 return EndpointToJson(view, ctx.principal.project_name);
               });
               if (!result.ok()) co_return ErrorResponse(result.status());
               changed();
               co_return JsonResponse(200, *result);
             });

  router.Add("DELETE", "/v1/endpoints/{name}",
             [&s, &endpoints, changed](Context& ctx) -> awaitable<http::Response> {
               auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
                 bool removed = false;
                 TF_ASSIGN_OR_RETURN(
                     EndpointView view,
                     endpoints.Delete(ctx.principal.project_id, ctx.Param("name"), &removed));
                 Json out = EndpointToJson(view, ctx.principal.project_name);
                 out["removed"] = removed;
                 return out;
               });
               if (!result.ok()) co_return ErrorResponse(result.status());
               changed();
               co_return JsonResponse(200, *result);
             });
}

}  // namespace tf::api
