// /healthz (no token), /metrics (Prometheus text) and /v1/status.
#include <cstdio>

#include "api/errors.h"
#include "api/services.h"
#include "base/time_format.h"

namespace tf::api {
namespace {

void RenderQueueDepths(Services& s, std::string& out) {
  out += "# HELP tensorfleet_queue_messages Messages in a queue by state.\n";
  out += "# TYPE tensorfleet_queue_messages gauge\n";
  auto projects = s.auth.ListProjects();
  if (!projects.ok()) return;
  TimeMs now = s.clock.Now();
  char buf[512];
  for (const auto& p : *projects) {
    auto queues = s.store.queues().ListQueues(p.id, "");
    if (!queues.ok()) continue;
    for (const auto& q : *queues) {
      auto c = s.store.queues().CountMessages(q.id, now);
      if (!c.ok()) continue;
      const std::pair<const char*, int64_t> states[] = {
          {"visible", c->visible}, {"in_flight", c->in_flight}, {"delayed", c->delayed}};
      for (auto [state, n] : states) {
        std::snprintf(buf, sizeof buf,
                      "tensorfleet_queue_messages{project=\"%s\",queue=\"%s\",state=\"%s\"} %lld\n",
                      p.name.c_str(), q.name.c_str(), state, static_cast<long long>(n));
        out += buf;
      }
    }
  }
}

}  // namespace

void AddSystemRoutes(Router& router, Services& s,
                     std::function<void(std::string&)> server_metrics) {
  router.Add(
      "GET", "/healthz",
      [](Context&) -> awaitable<http::Response> {
        co_return JsonResponse(200, {{"status", "ok"}});
      },
      Access::kPublic);

  router.Add("GET", "/metrics", [&s, server_metrics](Context&) -> awaitable<http::Response> {
    std::string text = co_await RunBlocking(s.pool, [&] {
      std::string out;
      s.metrics.Render(out);
      if (server_metrics) server_metrics(out);
      out += "# HELP tensorfleet_long_polls_waiting Receive calls waiting for messages.\n";
      out += "# TYPE tensorfleet_long_polls_waiting gauge\n";
      out += "tensorfleet_long_polls_waiting " + std::to_string(s.wakeups.waiting()) + "\n";
      RenderQueueDepths(s, out);
      return out;
    });
    http::Response r;
    r.content_type = "text/plain; version=0.0.4";
    r.body = std::move(text);
    co_return r;
  });

  router.Add("GET", "/v1/status", [&s](Context& ctx) -> awaitable<http::Response> {
    auto queues = co_await RunBlocking(
        s.pool, [&] { return s.queues.ListQueues(ctx.principal.project_id, ""); });
    if (!queues.ok()) co_return ErrorResponse(queues.status());
    TimeMs now = s.clock.Now();
    co_return JsonResponse(200, {{"version", kVersion},
                                 {"store", s.store.backend()},
                                 {"schema_version", s.store.schema_version()},
                                 {"started_at", FormatTime(s.started_at)},
                                 {"uptime_seconds", (now - s.started_at) / kSecondMs},
                                 {"leader", s.leadership != nullptr && s.leadership->Held()},
                                 {"project", ctx.principal.project_name},
                                 {"token", ctx.principal.token_id},
                                 {"admin", ctx.principal.admin},
                                 {"queues", queues->size()}});
  });
}

}  // namespace tf::api
