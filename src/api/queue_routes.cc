// /v1/queues: the native queue API. Each handler parses, calls the queue service (on the
// blocking pool, or for send, receive and delete through queues/async_calls.h), and maps the
// result.
#include "api/errors.h"
#include "api/queue_json.h"
#include "api/services.h"
#include "queues/async_calls.h"
#include "queues/long_poll.h"

namespace tf::api {
namespace {

// A 200 answer whose JSON body is already written (queue_json.h's *Json functions).
http::Response JsonText(std::string body) {
  http::Response r;
  r.status = 200;
  r.body = std::move(body);
  return r;
}

// Reads an array field of strings or objects with at most a batch of entries.
Result<const Json*> ReadBatch(FieldReader& r, const std::string& field) {
  const Json* items = r.Value(field, Json::value_t::array);
  TF_RETURN_IF_ERROR(r.Finish());
  if (items == nullptr) return InvalidArgument(r.Name(field) + " is required");
  return items;
}

}  // namespace

void AddQueueRoutes(Router& router, Services& s) {
  router.Add("POST", "/v1/queues", [&s](Context& ctx) -> awaitable<http::Response> {
    auto body = ParseJsonObject(ctx.request.body);
    if (!body.ok()) co_return ErrorResponse(body.status());
    FieldReader r(*body);
    std::string name = r.Required(r.String("name"), "name");
    queues::QueueSettings settings = ReadSettings(r);
    if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
    auto q = co_await RunBlocking(
        s.pool, [&] { return s.queues.CreateQueue(ctx.principal.project_id, name, settings); });
    if (!q.ok()) co_return ErrorResponse(q.status());
    co_return JsonResponse(201, QueueToJson(*q, nullptr));
  });

  router.Add("GET", "/v1/queues", [&s](Context& ctx) -> awaitable<http::Response> {
    std::string prefix = ctx.request.query.count("prefix") ? ctx.request.query.at("prefix") : "";
    auto list = co_await RunBlocking(
        s.pool, [&] { return s.queues.ListQueues(ctx.principal.project_id, prefix); });
    if (!list.ok()) co_return ErrorResponse(list.status());
    Json out = Json::array();
    for (const auto& q : *list) out.push_back(QueueToJson(q, nullptr));
    co_return JsonResponse(200, {{"queues", out}});
  });

  router.Add("GET", "/v1/queues/{name}", [&s](Context& ctx) -> awaitable<http::Response> {
    auto info = co_await RunBlocking(s.pool, [&] {
      return s.queues.DescribeQueue(ctx.principal.project_id, ctx.Param("name"));
    });
    if (!info.ok()) co_return ErrorResponse(info.status());
    co_return JsonResponse(200, QueueToJson(info->queue, &info->counts));
  });

  router.Add("PATCH", "/v1/queues/{name}", [&s](Context& ctx) -> awaitable<http::Response> {
    auto body = ParseJsonObject(ctx.request.body);
    if (!body.ok()) co_return ErrorResponse(body.status());
    FieldReader r(*body);
    queues::QueueSettings settings = ReadSettings(r);
    if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
    auto q = co_await RunBlocking(s.pool, [&] {
      return s.queues.UpdateQueue(ctx.principal.project_id, ctx.Param("name"), settings);
    });
    if (!q.ok()) co_return ErrorResponse(q.status());
    co_return JsonResponse(200, QueueToJson(*q, nullptr));
  });

  router.Add("DELETE", "/v1/queues/{name}", [&s](Context& ctx) -> awaitable<http::Response> {
    Status st = co_await RunBlocking(
        s.pool, [&] { return s.queues.DeleteQueue(ctx.principal.project_id, ctx.Param("name")); });
    if (!st.ok()) co_return ErrorResponse(st);
    co_return JsonResponse(200, {{"deleted", ctx.Param("name")}});
  });

  router.Add("POST", "/v1/queues/{name}/messages", [&s](Context& ctx) -> awaitable<http::Response> {
    auto body = ParseJsonObject(ctx.request.body);
    if (!body.ok()) co_return ErrorResponse(body.status());
    FieldReader r(*body);
    auto items = ReadBatch(r, "messages");
    if (!items.ok()) co_return ErrorResponse(items.status());
    std::vector<queues::SendEntry> entries;
    for (size_t i = 0; i < (*items)->size(); ++i) {
      auto e = ReadSendEntry((**items)[i], "messages[" + std::to_string(i) + "]");
      if (!e.ok()) co_return ErrorResponse(e.status());
      entries.push_back(std::move(*e));
    }
    auto sent = co_await queues::SendAsync(s.queues, s.pool, ctx.principal.project_id,
                                           ctx.Param("name"), entries);
    if (!sent.ok()) co_return ErrorResponse(sent.status());
    co_return JsonText(SentJson(*sent));
  });

  router.Add("POST", "/v1/queues/{name}/receive", [&s](Context& ctx) -> awaitable<http::Response> {
    auto body = ParseJsonObject(ctx.request.body);
    if (!body.ok()) co_return ErrorResponse(body.status());
    FieldReader r(*body);
    queues::LongPollParams params;
    params.receive.max_messages = r.Int("max_messages").value_or(1);
    params.receive.visibility_timeout_seconds = r.Int("visibility_timeout_seconds");
    params.wait_seconds = r.Int("wait_seconds");
    if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
    auto got = co_await queues::ReceiveWithWait(
        s.queues, s.wakeups, s.pool, ctx.principal.project_id, ctx.Param("name"), params);
    if (!got.ok()) co_return ErrorResponse(got.status());
    co_return JsonText(ReceivedJson(*got));
  });

  router.Add("POST", "/v1/queues/{name}/delete", [&s](Context& ctx) -> awaitable<http::Response> {
    auto body = ParseJsonObject(ctx.request.body);
    if (!body.ok()) co_return ErrorResponse(body.status());
    FieldReader r(*body);
    auto items = ReadBatch(r, "receipt_handles");
    if (!items.ok()) co_return ErrorResponse(items.status());
    std::vector<std::string> handles;
    for (const Json& h : **items) {
      if (!h.is_string())
        co_return ErrorResponse(InvalidArgument("'receipt_handles' must hold strings"));
      handles.push_back(h.get<std::string>());
    }
    auto results = co_await queues::DeleteAsync(s.queues, s.pool, ctx.principal.project_id,
                                                ctx.Param("name"), handles);
    if (!results.ok()) co_return ErrorResponse(results.status());
    co_return JsonText(BatchResultsJson(*results));
  });

  router.Add(
      "POST", "/v1/queues/{name}/visibility", [&s](Context& ctx) -> awaitable<http::Response> {
        auto body = ParseJsonObject(ctx.request.body);
        if (!body.ok()) co_return ErrorResponse(body.status());
        FieldReader r(*body);
        auto items = ReadBatch(r, "changes");
        if (!items.ok()) co_return ErrorResponse(items.status());
        std::vector<queues::VisibilityRequest> changes;
        for (size_t i = 0; i < (*items)->size(); ++i) {
          const Json& item = (**items)[i];
          std::string where = "changes[" + std::to_string(i) + "]";
          if (!item.is_object())
            co_return ErrorResponse(InvalidArgument("'" + where + "' must be an object"));
          FieldReader c(item, where);
          queues::VisibilityRequest v;
          v.receipt_handle = c.Required(c.String("receipt_handle"), "receipt_handle");
          v.visibility_timeout_seconds =
              c.Required(c.Int("visibility_timeout_seconds"), "visibility_timeout_seconds");
          if (Status st = c.Finish(); !st.ok()) co_return ErrorResponse(st);
          changes.push_back(std::move(v));
        }
        auto results = co_await RunBlocking(s.pool, [&] {
          return s.queues.ChangeVisibility(ctx.principal.project_id, ctx.Param("name"), changes);
        });
        if (!results.ok()) co_return ErrorResponse(results.status());
        co_return JsonText(BatchResultsJson(*results));
      });

  router.Add("POST", "/v1/queues/{name}/purge", [&s](Context& ctx) -> awaitable<http::Response> {
    auto purged = co_await RunBlocking(
        s.pool, [&] { return s.queues.Purge(ctx.principal.project_id, ctx.Param("name")); });
    if (!purged.ok()) co_return ErrorResponse(purged.status());
    co_return JsonResponse(200, {{"purged", *purged}});
  });

  router.Add("POST", "/v1/queues/{name}/redrive", [&s](Context& ctx) -> awaitable<http::Response> {
    auto body = ParseJsonObject(ctx.request.body);
    if (!body.ok()) co_return ErrorResponse(body.status());
    FieldReader r(*body);
    std::string to = r.String("to").value_or("");
    int64_t limit = r.Int("max_messages").value_or(0);
    if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
    auto moved = co_await RunBlocking(s.pool, [&] {
      return s.queues.Redrive(ctx.principal.project_id, ctx.Param("name"), to, limit);
    });
    if (!moved.ok()) co_return ErrorResponse(moved.status());
    co_return JsonResponse(200, {{"moved", *moved}});
  });
}

}  // namespace tf::api
