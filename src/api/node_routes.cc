// The fleet's routes: nodes for people (list, drain, undrain, remove), join tokens, and what
// workers call (register, heartbeat, assignments by long poll, rank reports, metrics). A worker
// registers with a join token (or an admin token) and is issued its node's own credential,
// which acts for that node alone (auth::WorkerPrincipal).
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <functional>

#include "api/errors.h"
#include "api/job_json.h"
#include "api/json_body.h"
#include "api/services.h"
#include "base/crypto.h"

namespace tf::api {
namespace {

constexpr int64_t kMaxWaitMs = 30'000;
// Assignments also change on another server sharing the store: waiters look again this often.
constexpr std::chrono::milliseconds kRecheck{2000};

Result<uint64_t> ParseToken(const std::string& text) {
  try {
    size_t used = 0;
    uint64_t v = std::stoull(text, &used);
    if (used == text.size() && v != 0) return v;
  } catch (const std::exception&) {
  }
  return InvalidArgument("'token': must be the attempt's token as a decimal string");
}

// Answers with the node's assignments as soon as they differ from what the worker has
// (`known`, the digest of the last answer it got), or after `wait_ms`.
awaitable<http::Response> WaitForAssignments(Services& s, std::string node_id, std::string known,
                                             int64_t wait_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  auto ex = co_await asio::this_coro::executor;
  int64_t key = NodeWakeKey(node_id);
  auto waiter = s.node_wakeups.Register(key, ex);
  http::Response response;
  for (;;) {
    waiter->notified = false;  // registered before looking: a change in between is not missed
    auto got = co_await RunBlocking(s.pool, [&] { return s.jobs.Assignments(node_id); });
    if (!got.ok()) {
      response = ErrorResponse(got.status());
      break;
    }
    Json body = AssignmentsToJson(*got);
    std::string digest = Sha256Hex(body.dump());
    auto now = std::chrono::steady_clock::now();
    if (digest != known || now >= deadline || s.node_wakeups.closed()) {
      body["digest"] = digest;
      response = JsonResponse(200, body);
      break;
    }
    if (waiter->notified) continue;
    waiter->timer.expires_at(std::min(deadline, now + kRecheck));
    boost::system::error_code ec;
    co_await waiter->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  s.node_wakeups.Unregister(key, waiter);
  co_return response;
}

// Whether the caller of a worker route may act for node `id`: an admin, or that node.
Status ActsFor(const Context& ctx, const std::string& id) {
  if (ctx.worker.ActsFor(id)) return OkStatus();
  if (ctx.worker.kind == auth::WorkerPrincipal::Kind::kJoin) {
    return PermissionDenied("a join token only registers a node (POST /v1/nodes)");
  }
  return PermissionDenied("this credential is node " + ctx.worker.node_id + "'s, not " + id + "'s");
}

// Whether the caller may report on a job's ranks: an admin, or a node (its ranks only: the job
// service checks the placement).
Status MayReport(const Context& ctx) {
  if (ctx.worker.kind == auth::WorkerPrincipal::Kind::kJoin) {
    return PermissionDenied("a join token only registers a node (POST /v1/nodes)");
  }
  return OkStatus();
}

}  // namespace

int64_t NodeWakeKey(const std::string& node_id) {
  return static_cast<int64_t>(std::hash<std::string>{}(node_id) >> 1);
}

void AddNodeRoutes(Router& router, Services& s) {
  router.Add("GET", "/v1/nodes", [&s](Context& ctx) -> awaitable<http::Response> {
    auto nodes = co_await RunBlocking(s.pool, [&] { return s.jobs.ListNodes(); });
    if (!nodes.ok()) co_return ErrorResponse(nodes.status());
    Json out = Json::array();
    // A project sees its own ranks only; an admin sees every one.
    const std::string viewer = ctx.principal.admin ? "" : ctx.principal.project_id;
    for (const jobs::NodeView& n : *nodes) out.push_back(NodeViewToJson(n, viewer));
    co_return JsonResponse(200, {{"nodes", out}});
  });

  // {"id": "node_...", "name": "gpu-box-1", "info": {address, cpus, memory_bytes, gpus, ...}}
  router.Add(
      "POST", "/v1/nodes",
      [&s](Context& ctx) -> awaitable<http::Response> {
        auto body = ParseJsonObject(ctx.request.body);
        if (!body.ok()) co_return ErrorResponse(body.status());
        FieldReader r(*body);
        std::string id = r.Required(r.String("id"), "id");
        std::string name = r.String("name").value_or(id);
        const Json* info_json = r.Value("info", Json::value_t::object);
        if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
        if (info_json == nullptr) co_return ErrorResponse(InvalidArgument("'info' is required"));
        if (id.size() < 6 || id.size() > 64 || id.rfind("node_", 0) != 0 ||
            id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos) {
          co_return ErrorResponse(
              InvalidArgument("'id': must be node_ followed by [a-z0-9_-], at most 64 characters"));
        }
        auto info = fleet::NodeInfoFromJson(*info_json);
        if (!info.ok())
          co_return ErrorResponse(InvalidArgument("'info." + info.status().message()));
        const auth::WorkerPrincipal& who = ctx.worker;
        if (who.kind == auth::WorkerPrincipal::Kind::kNode && who.node_id != id) {
          co_return ErrorResponse(PermissionDenied("this credential is node " + who.node_id +
                                                   "'s: it cannot register node " + id));
        }
        // A registration by a join or admin token issues the node a new credential (replacing
        // any it had); one by the node's own credential keeps it.
        store::NodeAdmission admission{who.join_token_id, ""};
        auth::NodeCredential credential;
        if (who.kind != auth::WorkerPrincipal::Kind::kNode) {
          credential = auth::AuthService::NewNodeCredential();
          admission.credential_hash = credential.hash;
        }
        auto node = co_await RunBlocking(
            s.pool, [&] { return s.jobs.RegisterNode(id, name, *info, admission); });
        if (!node.ok()) co_return ErrorResponse(node.status());
        Json answer = {{"id", node->id}, {"epoch", node->epoch}};
        if (!credential.secret.empty()) answer["credential"] = credential.secret;
        co_return JsonResponse(200, answer);
      },
      Access::kWorker);

  router.Add(
      "POST", "/v1/nodes/{id}/heartbeat",
      [&s](Context& ctx) -> awaitable<http::Response> {
        auto body = ParseJsonObject(ctx.request.body);
        if (!body.ok()) co_return ErrorResponse(body.status());
        FieldReader r(*body);
        int64_t epoch = r.Required(r.Int("epoch"), "epoch");
        if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
        if (Status st = ActsFor(ctx, ctx.Param("id")); !st.ok()) co_return ErrorResponse(st);
        Status st =
            co_await RunBlocking(s.pool, [&] { return s.jobs.Heartbeat(ctx.Param("id"), epoch); });
        if (!st.ok()) co_return ErrorResponse(st);
        co_return JsonResponse(200, {{"ok", true}});
      },
      Access::kWorker);

  router.Add(
      "GET", "/v1/nodes/{id}/assignments",
      [&s](Context& ctx) -> awaitable<http::Response> {
        auto& q = ctx.request.query;
        int64_t wait_ms = 0;
        if (q.count("wait_ms")) {
          try {
            wait_ms = std::stoll(q["wait_ms"]);
          } catch (const std::exception&) {
            wait_ms = -1;
          }
          if (wait_ms < 0 || wait_ms > kMaxWaitMs) {
            co_return ErrorResponse(InvalidArgument("wait_ms must be between 0 and 30000"));
          }
        }
        std::string known = q.count("known") ? q["known"] : "";
        if (Status st = ActsFor(ctx, ctx.Param("id")); !st.ok()) co_return ErrorResponse(st);
        co_return co_await WaitForAssignments(s, ctx.Param("id"), known, wait_ms);
      },
      Access::kWorker);

  // {"deadline_ms": 120000, "reason": "spot interruption notice"}
  router.Add(
      "POST", "/v1/nodes/{id}/drain",
      [&s](Context& ctx) -> awaitable<http::Response> {
        auto body = ParseJsonObject(ctx.request.body);
        if (!body.ok()) co_return ErrorResponse(body.status());
        FieldReader r(*body);
        int64_t deadline = r.Int("deadline_ms").value_or(120'000);
        std::string reason = r.String("reason").value_or("drained by request");
        if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
        if (deadline < 0 || deadline > 3'600'000) {
          co_return ErrorResponse(InvalidArgument("'deadline_ms': must be 0 to 3600000"));
        }
        if (Status st = ActsFor(ctx, ctx.Param("id")); !st.ok()) co_return ErrorResponse(st);
        Status st = co_await RunBlocking(
            s.pool, [&] { return s.jobs.Drain(ctx.Param("id"), deadline, reason); });
        if (!st.ok()) co_return ErrorResponse(st);
        co_return JsonResponse(200, {{"draining", ctx.Param("id")}, {"deadline_ms", deadline}});
      },
      Access::kWorker);

  router.Add(
      "POST", "/v1/nodes/{id}/undrain",
      [&s](Context& ctx) -> awaitable<http::Response> {
        Status st = co_await RunBlocking(s.pool, [&] { return s.jobs.Undrain(ctx.Param("id")); });
        if (!st.ok()) co_return ErrorResponse(st);
        co_return JsonResponse(200, {{"undrained", ctx.Param("id")}});
      },
      Access::kAdmin);

  router.Add(
      "DELETE", "/v1/nodes/{id}",
      [&s](Context& ctx) -> awaitable<http::Response> {
        Status st =
            co_await RunBlocking(s.pool, [&] { return s.jobs.RemoveNode(ctx.Param("id")); });
        if (!st.ok()) co_return ErrorResponse(st);
        co_return JsonResponse(200, {{"removed", ctx.Param("id")}});
      },
      Access::kAdmin);

  // A worker's report on one rank: {"attempt", "token", "node_rank", "state", "exit_code",
  // "signal", "log_tail", "message"}. 409 for a stale token: the worker must stop the rank.
  router.Add(
      "POST", "/v1/jobs/{id}/reports",
      [&s](Context& ctx) -> awaitable<http::Response> {
        auto body = ParseJsonObject(ctx.request.body);
        if (!body.ok()) co_return ErrorResponse(body.status());
        FieldReader r(*body);
        jobs::RankReport report;
        report.attempt = static_cast<int>(r.Required(r.Int("attempt"), "attempt"));
        std::string token = r.Required(r.String("token"), "token");
        report.node_rank = static_cast<int>(r.Required(r.Int("node_rank"), "node_rank"));
        report.state = r.Required(r.String("state"), "state");
        report.exit_code = static_cast<int>(r.Int("exit_code").value_or(-1));
        report.signal = static_cast<int>(r.Int("signal").value_or(0));
        report.log_tail = r.String("log_tail").value_or("");
        report.message = r.String("message").value_or("");
        if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
        auto parsed = ParseToken(token);
        if (!parsed.ok()) co_return ErrorResponse(parsed.status());
        report.token = *parsed;
        if (Status st = MayReport(ctx); !st.ok()) co_return ErrorResponse(st);
        report.from_node = ctx.worker.node_id;
        Status st =
            co_await RunBlocking(s.pool, [&] { return s.jobs.Report(ctx.Param("id"), report); });
        if (!st.ok()) co_return ErrorResponse(st);
        co_return JsonResponse(200, {{"ok", true}});
      },
      Access::kWorker);

  // {"attempt", "token", "samples": [{"name", "value", "step"}]}
  router.Add(
      "POST", "/v1/jobs/{id}/samples",
      [&s](Context& ctx) -> awaitable<http::Response> {
        auto body = ParseJsonObject(ctx.request.body);
        if (!body.ok()) co_return ErrorResponse(body.status());
        FieldReader r(*body);
        int attempt = static_cast<int>(r.Required(r.Int("attempt"), "attempt"));
        std::string token = r.Required(r.String("token"), "token");
        const Json* samples = r.Value("samples", Json::value_t::array);
        if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
        auto parsed = ParseToken(token);
        if (!parsed.ok()) co_return ErrorResponse(parsed.status());
        std::vector<store::MetricPoint> points;
        if (samples != nullptr) {
          for (size_t i = 0; i < samples->size(); ++i) {
            const Json& x = (*samples)[i];
            std::string where = "samples[" + std::to_string(i) + "]";
            if (!x.is_object() || !x.contains("name") || !x["name"].is_string() ||
                !x.contains("value") || !x["value"].is_number()) {
              co_return ErrorResponse(
                  InvalidArgument("'" + where + "': needs a string name and a numeric value"));
            }
            store::MetricPoint p;
            p.name = x["name"].get<std::string>();
            p.value = x["value"].get<double>();
            if (x.contains("step") && x["step"].is_number_integer())
              p.step = x["step"].get<int64_t>();
            points.push_back(std::move(p));
          }
        }
        if (Status st = MayReport(ctx); !st.ok()) co_return ErrorResponse(st);
        Status st = co_await RunBlocking(s.pool, [&] {
          return s.jobs.AddMetrics(ctx.Param("id"), attempt, *parsed, points, ctx.worker.node_id);
        });
        if (!st.ok()) co_return ErrorResponse(st);
        co_return JsonResponse(200, {{"added", points.size()}});
      },
      Access::kWorker);
}

}  // namespace tf::api
