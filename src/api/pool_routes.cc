// /v1/pools: create from a YAML spec, list, describe, scale, delete.
#include "api/pool_routes.h"

#include "api/errors.h"
#include "api/json_body.h"

namespace tf::api {
void AddPoolRoutes(Router& router, Services& s, pools::PoolService& pools,
                   const std::function<void()>& changed) {
  // {"spec": "<the YAML text>", "source": "pool.yaml"}
  router.Add(
      "POST", "/v1/pools",
      [&s, &pools, changed](Context& ctx) -> awaitable<http::Response> {
        auto body = ParseJsonObject(ctx.request.body);
        if (!body.ok()) co_return ErrorResponse(body.status());
        FieldReader r(*body);
        std::string text = r.Required(r.String("spec"), "spec");
        std::string source = r.String("source").value_or("pool.yaml");
        if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
        auto created = co_await RunBlocking(s.pool, [&] { return pools.Create(text, source); });
        if (!created.ok()) co_return ErrorResponse(created.status());
        changed();
        co_return JsonResponse(201, pools::PoolViewToJson(*created));
      },
      Access::kAdmin);

  router.Add(
      "GET", "/v1/pools",
      [&s, &pools](Context&) -> awaitable<http::Response> {
        auto listed = co_await RunBlocking(s.pool, [&] { return pools.List(); });
        if (!listed.ok()) co_return ErrorResponse(listed.status());
        Json out = Json::array();
        for (const pools::PoolView& v : *listed) out.push_back(pools::PoolViewToJson(v));
        co_return JsonResponse(200, {{"pools", std::move(out)}});
      },
      Access::kAdmin);

  router.Add(
      "GET", "/v1/pools/{name}",
      [&s, &pools](Context& ctx) -> awaitable<http::Response> {
        auto got = co_await RunBlocking(s.pool, [&] { return pools.Get(ctx.Param("name")); });
        if (!got.ok()) co_return ErrorResponse(got.status());
        co_return JsonResponse(200, pools::PoolViewToJson(*got));
      },
      Access::kAdmin);

  // {"min": N, "max": N}, either or both.
  router.Add(
      "POST", "/v1/pools/{name}/scale",
      [&s, &pools, changed](Context& ctx) -> awaitable<http::Response> {
        auto body = ParseJsonObject(ctx.request.body);
        if (!body.ok()) co_return ErrorResponse(body.status());
        FieldReader r(*body);
        auto min = r.Int32("min");
        auto max = r.Int32("max");
        if (Status st = r.Finish(); !st.ok()) co_return ErrorResponse(st);
        if (!min.ok()) co_return ErrorResponse(min.status());
        if (!max.ok()) co_return ErrorResponse(max.status());
        if (!*min && !*max) {
          co_return ErrorResponse(InvalidArgument("give 'min', 'max' or both"));
        }
        auto scaled = co_await RunBlocking(
            s.pool, [&] { return pools.Scale(ctx.Param("name"), *min, *max); });
        if (!scaled.ok()) co_return ErrorResponse(scaled.status());
        changed();
        co_return JsonResponse(200, pools::PoolViewToJson(*scaled));
      },
      Access::kAdmin);

  router.Add(
      "DELETE", "/v1/pools/{name}",
      [&s, &pools, changed](Context& ctx) -> awaitable<http::Response> {
        Status st = co_await RunBlocking(s.pool, [&] { return pools.Delete(ctx.Param("name")); });
        if (!st.ok()) co_return ErrorResponse(st);
        changed();
        co_return JsonResponse(200, {{"deleted", ctx.Param("name")}});
      },
      Access::kAdmin);
}

}  // namespace tf::api
