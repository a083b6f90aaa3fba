// /v1/buckets: create, list, describe and delete a project's buckets.
#include "api/errors.h"
#include "api/json_body.h"
#include "api/services.h"
#include "base/time_format.h"

namespace tf::api {
namespace {

Json BucketToJson(const store::Bucket& b) {
  return {{"name", b.name}, {"created_at", FormatTime(b.created_at)}};
}

}  // namespace

void AddBucketRoutes(Router& router, Services& s) {
  router.Add("POST", "/v1/buckets", [&s](Context& ctx) -> awaitable<http::Response> {
    auto body = ParseJsonObject(ctx.request.body);
    if (!body.ok()) co_return ErrorResponse(body.status());
    FieldReader r(*body);
    std::string name = r.Required(r.String("name"), "name");
    if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
    auto bucket = co_await RunBlocking(
        s.pool, [&] { return s.objects.CreateBucket(ctx.principal.project_id, name); });
    if (!bucket.ok()) co_return ErrorResponse(bucket.status());
    co_return JsonResponse(201, BucketToJson(*bucket));
  });

  router.Add("GET", "/v1/buckets", [&s](Context& ctx) -> awaitable<http::Response> {
    auto buckets = co_await RunBlocking(
        s.pool, [&] { return s.objects.ListBuckets(ctx.principal.project_id); });
    if (!buckets.ok()) co_return ErrorResponse(buckets.status());
    Json out = Json::array();
    for (const auto& b : *buckets) out.push_back(BucketToJson(b));
    co_return JsonResponse(200, {{"buckets", out}});
  });

  router.Add("GET", "/v1/buckets/{bucket}", [&s](Context& ctx) -> awaitable<http::Response> {
    auto bucket = co_await RunBlocking(
        s.pool, [&] { return s.objects.GetBucket(ctx.principal.project_id, ctx.Param("bucket")); });
    if (!bucket.ok()) co_return ErrorResponse(bucket.status());
    co_return JsonResponse(200, BucketToJson(*bucket));
  });

  router.Add("DELETE", "/v1/buckets/{bucket}", [&s](Context& ctx) -> awaitable<http::Response> {
    Status st = co_await RunBlocking(s.pool, [&] {
      return s.objects.DeleteBucket(ctx.principal.project_id, ctx.Param("bucket"));
    });
    if (!st.ok()) co_return ErrorResponse(st);
    co_return JsonResponse(200, {{"deleted", ctx.Param("bucket")}});
  });
}

}  // namespace tf::api
