// /v1/jobs: a project's managed jobs (docs/api.md, docs/jobs.md).
#include "api/errors.h"
#include "api/job_json.h"
#include "api/json_body.h"
#include "api/services.h"

namespace tf::api {
namespace {

constexpr int kListLimit = 1000;
constexpr int kMetricLimit = 10'000;

}  // namespace

void AddJobRoutes(Router& router, Services& s) {
  // {"spec": "<the YAML text>", "source": "train.yaml", "code_key": "bundles/<sha256>.tar.gz"}
  router.Add("POST", "/v1/jobs", [&s](Context& ctx) -> awaitable<http::Response> {
    auto body = ParseJsonObject(ctx.request.body);
    if (!body.ok()) co_return ErrorResponse(body.status());
    FieldReader r(*body);
    std::string spec = r.Required(r.String("spec"), "spec");
    std::string source = r.String("source").value_or("spec.yaml");
    std::string code_key = r.String("code_key").value_or("");
    // {"lr": 0.0003, ...}: hyperparameters that replace or add to the spec's (`run --set`).
    const Json* set = r.Value("set", Json::value_t::object);
    Json settings = set ? *set : Json(nullptr);
    if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
    auto job = co_await RunBlocking(s.pool, [&] {
      return s.jobs.Submit(ctx.principal.project_id, spec, source, code_key, settings);
    });
    if (!job.ok()) co_return ErrorResponse(job.status());
    co_return JsonResponse(201, JobToJson(*job));
  });

  router.Add("GET", "/v1/jobs", [&s](Context& ctx) -> awaitable<http::Response> {
    bool all = ctx.request.query.count("all") && ctx.request.query["all"] != "false";
    auto jobs = co_await RunBlocking(
        s.pool, [&] { return s.jobs.List(ctx.principal.project_id, all, kListLimit); });
    if (!jobs.ok()) co_return ErrorResponse(jobs.status());
    Json out = Json::array();
    for (const jobs::Job& j : *jobs) out.push_back(JobToJson(j));
    co_return JsonResponse(200, {{"jobs", out}});
  });

  router.Add("GET", "/v1/jobs/{id}", [&s](Context& ctx) -> awaitable<http::Response> {
    auto job = co_await RunBlocking(
        s.pool, [&] { return s.jobs.Get(ctx.principal.project_id, ctx.Param("id")); });
    if (!job.ok()) co_return ErrorResponse(job.status());
    co_return JsonResponse(200, JobToJson(*job));
  });

  router.Add("POST", "/v1/jobs/{id}/cancel", [&s](Context& ctx) -> awaitable<http::Response> {
    auto job = co_await RunBlocking(
        s.pool, [&] { return s.jobs.Cancel(ctx.principal.project_id, ctx.Param("id")); });
    if (!job.ok()) co_return ErrorResponse(job.status());
    co_return JsonResponse(200, JobToJson(*job));
  });

  router.Add("GET", "/v1/jobs/{id}/events", [&s](Context& ctx) -> awaitable<http::Response> {
    auto events = co_await RunBlocking(
        s.pool, [&] { return s.jobs.EventsOf(ctx.principal.project_id, ctx.Param("id")); });
    if (!events.ok()) co_return ErrorResponse(events.status());
    Json out = Json::array();
    for (const store::JobEvent& e : *events) out.push_back(JobEventToJson(e));
    co_return JsonResponse(200, {{"events", out}});
  });

  router.Add("GET", "/v1/jobs/{id}/metrics", [&s](Context& ctx) -> awaitable<http::Response> {
    auto points = co_await RunBlocking(s.pool, [&] {
      return s.jobs.Metrics(ctx.principal.project_id, ctx.Param("id"), kMetricLimit);
    });
    if (!points.ok()) co_return ErrorResponse(points.status());
    Json out = Json::array();
    for (const store::MetricPoint& p : *points) out.push_back(MetricPointToJson(p));
    co_return JsonResponse(200, {{"metrics", out}});
  });
}

}  // namespace tf::api
