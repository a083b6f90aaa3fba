#include "api/sweep_routes.h"

#include <algorithm>
#include <map>

#include "api/errors.h"
#include "api/job_json.h"
#include "api/json_body.h"
#include "api/project_scope.h"
#include "base/time_format.h"

namespace tf::api {
namespace {

using sweeps::SweepTrial;
using sweeps::SweepView;

}  // namespace

Json SweepToJson(const SweepView& view, const std::string& project_name, bool trials) {
  const store::DocumentRecord& r = view.record;
  Json out = {{"id", r.id},
              {"name", r.name},
              {"project", project_name},
              {"state", r.state},
              {"reason", view.doc.reason},
              {"created_at", FormatTime(r.created_at)},
              {"updated_at", FormatTime(r.updated_at)},
              {"spent_usd", view.doc.spent}};
  std::map<std::string, int> by_state;
  for (const SweepTrial& t : view.doc.trials) ++by_state[t.state];
  out["trial_counts"] = by_state;
  auto spec = sweeps::SpecOf(view.doc);
  if (!spec.ok()) {
    out["spec_error"] = spec.status().message();
    return out;
  }
  const sweeps::Objective& objective = spec->objective;
  out["objective"] = {{"metric", objective.metric},
                      {"goal", objective.goal == sweeps::Goal::kMinimize ? "minimize" : "maximize"},
                      {"value", objective.best ? "best" : "last"}};
  out["strategy"] = spec->strategy;
  out["max_trials"] = spec->max_trials;
  out["max_parallel"] = spec->max_parallel;
  out["budget_usd"] = spec->budget ? Json(*spec->budget) : Json(nullptr);
  if (spec->early_stopping) {
    out["early_stopping"] = {{"type", sweeps::StopRuleName(spec->early_stopping->rule)},
                             {"resource", spec->early_stopping->resource}};
  }

  // The leaderboard: by objective value, best first; trials without one after, by number.
  std::vector<std::pair<std::optional<double>, const SweepTrial*>> ranked;
  for (const SweepTrial& t : view.doc.trials) {
    ranked.emplace_back(sweeps::ObjectiveValue(t, objective), &t);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
    if (a.first && b.first) return sweeps::Better(*a.first, *b.first, objective.goal);
    return a.first.has_value() && !b.first.has_value();
  });
  // The best value so far after each trial ended, in the order they ended: the curve.
  std::vector<const SweepTrial*> by_end;
  for (const SweepTrial& t : view.doc.trials) {
    if (sweeps::TrialEnded(t) || t.state == sweeps::kTrialPaused) by_end.push_back(&t);
  }
  std::stable_sort(by_end.begin(), by_end.end(), [](const SweepTrial* a, const SweepTrial* b) {
    return a->ended_at < b->ended_at;
  });
  Json curve = Json::array();
  std::optional<double> best;
  for (const SweepTrial* t : by_end) {
    if (t->state != sweeps::kTrialComplete) continue;
    std::optional<double> v = sweeps::ObjectiveValue(*t, objective);
    if (v && (!best || sweeps::Better(*v, *best, objective.goal))) best = v;
    if (best) curve.push_back({{"trial", t->number}, {"best", *best}});
  }
  out["best_so_far"] = std::move(curve);
  // The best complete trial.
  for (const auto& [value, t] : ranked) {
    if (value && t->state == sweeps::kTrialComplete) {
      out["best"] = {{"trial", t->number},
                     {"value", *value},
                     {"params", t->params},
                     {"job_id", t->jobs.empty() ? "" : t->jobs.back()}};
      break;
    }
  }
  if (!trials) return out;

  Json rows = Json::array();
  for (const auto& [value, t] : ranked) {
    rows.push_back(
        {{"number", t->number},
         {"state", t->state},
         {"value", value ? Json(*value) : Json(nullptr)},
         {"params", t->params},
         {"bracket", t->bracket},
         {"rung", t->rung},
         {"last_step", t->reports.empty() ? Json(nullptr) : Json(t->reports.back().resource)},
         {"reports", t->reports.size()},
         {"cost_usd", t->cost},
         {"jobs", t->jobs},
         {"reason", t->reason},
         {"started_at", TimeOrNull(t->started_at)},
         {"ended_at", TimeOrNull(t->ended_at)}});
  }
  out["trials"] = std::move(rows);
  Json events = Json::array();
  for (const sweeps::SweepEvent& e : view.doc.events) {
    events.push_back({{"at", FormatTime(e.at)}, {"text", e.text}});
  }
  out["events"] = std::move(events);
  return out;
}

void AddSweepRoutes(Router& router, Services& s, sweeps::SweepService& sweeps,
                    const std::function<void()>& changed) {
  // {"spec": "<the YAML text>", "source": "sweep.yaml", "files": {"train.yaml": "<text>"},
  //  "code_key": "bundles/<sha256>.tar.gz"}
  router.Add("POST", "/v1/sweeps",
             [&s, &sweeps, changed](Context& ctx) -> awaitable<http::Response> {
               auto body = ParseJsonObject(ctx.request.body);
               if (!body.ok()) co_return ErrorResponse(body.status());
               FieldReader r(*body);
               std::string text = r.Required(r.String("spec"), "spec");
               std::string source = r.String("source").value_or("sweep.yaml");
               std::string code_key = r.String("code_key").value_or("");
               const Json* files = r.Value("files", Json::value_t::object);
               if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
               Json file_texts = files ? *files : Json::object();
               for (const auto& [path, content] : file_texts.items()) {
                 if (!content.is_string()) {
                   co_return ErrorResponse(
                       InvalidArgument("'files." + path + "' must be the file's text"));
                 }
               }
               auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
                 TF_ASSIGN_OR_RETURN(SweepView view, sweeps.Start(ctx.principal.project_id, text,
                                                                  source, file_texts, code_key));
                 return SweepToJson(view, ctx.principal.project_name, true);
               });
               if (!result.ok()) co_return ErrorResponse(result.status());
               changed();
               co_return JsonResponse(201, *result);
             });

  router.Add("GET", "/v1/sweeps", [&s, &sweeps](Context& ctx) -> awaitable<http::Response> {
    auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
      TF_ASSIGN_OR_RETURN(ListingScope scope,
                          ListingScopeOf(s.auth, ctx.principal, ctx.request.query, "sweeps"));
      TF_ASSIGN_OR_RETURN(auto views, sweeps.List(scope.project_id));
      Json out = Json::array();
      for (const SweepView& v : views) {
        out.push_back(SweepToJson(v, scope.names[v.record.project_id], false));
      }
      return Json{{"sweeps", std::move(out)}};
    });
    if (!result.ok()) co_return ErrorResponse(result.status());
    co_return JsonResponse(200, *result);
  });

  router.Add("GET", "/v1/sweeps/{name}", [&s, &sweeps](Context& ctx) -> awaitable<http::Response> {
    auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
      TF_ASSIGN_OR_RETURN(SweepView view, sweeps.Get(ctx.principal.project_id, ctx.Param("name")));
      return SweepToJson(view, ctx.principal.project_name, true);
    });
    if (!result.ok()) co_return ErrorResponse(result.status());
    co_return JsonResponse(200, *result);
  });

  router.Add("POST", "/v1/sweeps/{name}/stop",
             [&s, &sweeps, changed](Context& ctx) -> awaitable<http::Response> {
               auto result = co_await RunBlocking(s.pool, [&]() -> Result<Json> {
                 TF_ASSIGN_OR_RETURN(SweepView view,
                                     sweeps.Stop(ctx.principal.project_id, ctx.Param("name")));
                 return SweepToJson(view, ctx.principal.project_name, true);
               });
               if (!result.ok()) co_return ErrorResponse(result.status());
               changed();
               co_return JsonResponse(200, *result);
             });
}

}  // namespace tf::api
