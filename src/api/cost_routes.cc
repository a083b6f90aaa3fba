// /v1/cost/report: what the fleet's work cost (cost/metering.h, docs/cost.md "Metering"), and
// the spend and burn-rate gauges of /metrics. A project token sees its project's work; an admin
// token sees every project's (or one, with ?project=NAME) and, for the whole fleet, idle
// capacity.
#include <cstdio>

#include "api/errors.h"
#include "api/json_body.h"
#include "api/services.h"
#include "base/time_format.h"
#include "cost/metering/metering_service.h"
#include "cost/metering/metering_time.h"

namespace tf::api {
namespace {

struct ReportQuery {
  cost::GroupBy by = cost::GroupBy::kProject;
  TimeMs since = 0;
  TimeMs until = 0;
  std::string project;  // a name; "" = the token's project, or every project for an admin
  bool lines = false;   // include every usage line
};

Result<ReportQuery> ReadQuery(const std::map<std::string, std::string>& query, TimeMs now) {
  ReportQuery q;
  q.since = cost::MonthStart(now);
  q.until = now;
  for (const auto& [name, value] : query) {
    if (name == "by") {
      TF_ASSIGN_OR_RETURN(q.by, cost::ParseGroupBy(value));
    } else if (name == "since") {
      TF_ASSIGN_OR_RETURN(q.since, cost::ParseReportTime(value, "since"));
    } else if (name == "until") {
      TF_ASSIGN_OR_RETURN(q.until, cost::ParseReportTime(value, "until"));
    } else if (name == "project") {
      q.project = value;
    } else if (name == "lines") {
      q.lines = value != "false" && value != "0";
    } else {
      return InvalidArgument(name + ": unknown parameter (by, since, until, project, lines)");
    }
  }
  if (q.until < q.since) {
    return InvalidArgument("until: " + FormatTime(q.until) + " is before since (" +
                           FormatTime(q.since) + ")");
  }
  return q;
}

// project id -> name, for every project.
Result<std::map<std::string, std::string>> ProjectNames(Services& s) {
  TF_ASSIGN_OR_RETURN(std::vector<store::Project> projects, s.auth.ListProjects());
  std::map<std::string, std::string> names;
  for (const store::Project& p : projects) names[p.id] = p.name;
  return names;
}

std::string NameOf(const std::map<std::string, std::string>& names, const std::string& id) {
  auto it = names.find(id);
  return it == names.end() ? id : it->second;
}

Json RowJson(const cost::SummaryRow& r) {
  return Json{{"key", r.key},
              {"label", r.label},
              {"seconds", r.seconds},
              {"gpu_seconds", r.gpu_seconds},
              {"cpu_seconds", r.cpu_seconds},
              {"cost", r.cost},
              {"lines", r.lines}};
}

Json UsageLineJson(const cost::UsageLine& u, const std::string& project) {
  return Json{{"project", project},
              {"job_id", u.job_id},
              {"job", u.job_name},
              {"attempt", u.attempt},
              {"node_rank", u.node_rank},
              {"node_id", u.node_id},
              {"from", FormatTime(u.from)},
              {"to", FormatTime(u.to)},
              {"seconds", u.seconds()},
              {"gpu_seconds", u.gpu_seconds},
              {"cpu_seconds", u.cpu_seconds},
              {"share", u.share},
              {"price_per_hour", u.price_per_hour},
              {"cost", u.cost},
              {"spot", u.spot},
              {"running", u.running}};
}

Json IdleLineJson(const cost::IdleLine& i) {
  return Json{{"node_id", i.node_id},
              {"instance_id", i.instance_id},
              {"epoch", i.epoch},
              {"from", FormatTime(i.from)},
              {"to", FormatTime(i.to)},
              {"price_per_hour", i.price_per_hour},
              {"spot", i.spot},
              {"up_seconds", i.up_seconds},
              {"used_share_seconds", i.used_share_seconds},
              {"idle_seconds", i.idle_seconds},
              {"cost", i.cost}};
}

Result<Json> Report(Services& s, const auth::Principal& who, const ReportQuery& q, TimeMs now) {
  std::string project_id = who.project_id;
  if (who.admin) {
    project_id.clear();
    if (!q.project.empty()) {
      TF_ASSIGN_OR_RETURN(store::Project p, s.auth.GetProjectByName(q.project));
      project_id = p.id;
    }
  } else if (!q.project.empty() && q.project != who.project_name) {
    return PermissionDenied("project: a project token sees only its own project ('" +
                            who.project_name + "')");
  }
  TF_ASSIGN_OR_RETURN(auto names, ProjectNames(s));
  TF_ASSIGN_OR_RETURN(cost::Metering m,
                      cost::MeterStore(s.store, project_id, q.since, q.until, now));
  cost::Summary sum = cost::Summarize(m, q.by);

  Json rows = Json::array();
  for (const cost::SummaryRow& r : sum.rows) {
    Json row = RowJson(r);
    if (q.by == cost::GroupBy::kProject) {
      row["key"] = NameOf(names, r.key);
      row["project_id"] = r.key;
    }
    rows.push_back(std::move(row));
  }
  Json out{{"by", cost::GroupByName(q.by)},
           {"project", project_id.empty() ? "" : NameOf(names, project_id)},
           {"window",
            {{"since", FormatTime(q.since)},
             {"until", FormatTime(q.until)},
             {"now", FormatTime(now)},
             {"since_ms", q.since},
             {"until_ms", q.until},
             {"now_ms", now}}},
           {"rows", std::move(rows)},
           {"totals",
            {{"usage_cost", sum.usage_cost},
             {"idle_cost", sum.idle_cost},
             {"total_cost", sum.total_cost},
             {"gpu_seconds", sum.gpu_seconds},
             {"cpu_seconds", sum.cpu_seconds}}},
           {"burn_rate_per_hour", m.burn_rate_per_hour}};
  // Idle capacity belongs to no project: only the whole fleet's report has it.
  if (project_id.empty()) {
    Json nodes = Json::array();
    for (const cost::IdleLine& i : m.idle) nodes.push_back(IdleLineJson(i));
    Json idle = RowJson(sum.idle);
    idle["nodes"] = std::move(nodes);
    out["idle"] = std::move(idle);
  } else {
    out["idle"] = nullptr;
  }
  Json unreadable = Json::array();
  for (const cost::Unreadable& u : m.unreadable) {
    unreadable.push_back({{"kind", u.kind}, {"id", u.id}, {"error", u.error}});
  }
  out["unreadable"] = std::move(unreadable);
  if (q.lines) {
    Json lines = Json::array();
    for (const cost::UsageLine& u : m.usage) {
      lines.push_back(UsageLineJson(u, NameOf(names, u.project_id)));
    }
    out["lines"] = std::move(lines);
  }
  return out;
}

// tensorfleet_spend_dollars_total and tensorfleet_burn_rate_dollars_per_hour per project, from
// every job the store holds, computed at each scrape.
void RenderSpend(Services& s, std::string& out) {
  TimeMs now = s.clock.Now();
  auto names = ProjectNames(s);
  auto m = cost::MeterJobs(s.store, "", 0, now, now);
  if (!names.ok() || !m.ok()) return;  // the other metrics still go out
  cost::Summary sum = cost::Summarize(*m, cost::GroupBy::kProject);
  std::map<std::string, double> spend;
  for (const cost::SummaryRow& r : sum.rows) spend[r.key] = r.cost;
  char buf[512];
  out += "# HELP tensorfleet_spend_dollars_total What each project's managed jobs have cost.\n";
  out += "# TYPE tensorfleet_spend_dollars_total counter\n";
  for (const auto& [id, name] : *names) {
    std::snprintf(buf, sizeof buf, "tensorfleet_spend_dollars_total{project=\"%s\"} %.6f\n",
                  name.c_str(), spend.count(id) ? spend[id] : 0.0);
    out += buf;
  }
  out +=
      "# HELP tensorfleet_burn_rate_dollars_per_hour What each project's running work costs "
      "per hour now.\n";
  out += "# TYPE tensorfleet_burn_rate_dollars_per_hour gauge\n";
  for (const auto& [id, name] : *names) {
    auto it = m->burn_rate_by_project.find(id);
    std::snprintf(buf, sizeof buf, "tensorfleet_burn_rate_dollars_per_hour{project=\"%s\"} %.6f\n",
                  name.c_str(), it == m->burn_rate_by_project.end() ? 0.0 : it->second);
    out += buf;
  }
}

}  // namespace

void AddCostRoutes(Router& router, Services& s) {
  // ?by=project|job|node|day&since=&until=&project=NAME&lines=true
  router.Add("GET", "/v1/cost/report", [&s](Context& ctx) -> awaitable<http::Response> {
    TimeMs now = s.clock.Now();
    auto query = ReadQuery(ctx.request.query, now);
    if (!query.ok()) co_return ErrorResponse(query.status());
    auto report =
        co_await RunBlocking(s.pool, [&] { return Report(s, ctx.principal, *query, now); });
    if (!report.ok()) co_return ErrorResponse(report.status());
    co_return JsonResponse(200, *report);
  });

  s.metrics.AddCollector([&s](std::string& out) { RenderSpend(s, out); });
}

}  // namespace tf::api
