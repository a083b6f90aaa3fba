// /v1/datasets: POST (the index of shards already uploaded), GET, GET /{name}, DELETE /{name}.
#include "api/dataset_routes.h"

#include "api/errors.h"
#include "api/json_body.h"

namespace tf::api {
namespace {

Result<datasets::NewDataset> ParseNewDataset(const std::string& body) {
  TF_ASSIGN_OR_RETURN(Json j, ParseJsonObject(body));
  FieldReader r(j);
  datasets::NewDataset d;
  d.name = r.Required(r.String("name"), "name");
  d.bucket = r.Required(r.String("bucket"), "bucket");
  d.shard_size = r.Required(r.Int("shard_size"), "shard_size");
  d.format = r.Required(r.String("format"), "format");
  const Json* shards = r.Value("shards", Json::value_t::array);
  TF_RETURN_IF_ERROR(r.Finish());
  if (shards == nullptr) return InvalidArgument("'shards' is required");
  for (size_t i = 0; i < shards->size(); ++i) {
    const Json& s = (*shards)[i];
    std::string where = "shards[" + std::to_string(i) + "]";
    if (!s.is_object()) return InvalidArgument("'" + where + "' must be an object");
    FieldReader sr(s, where);
    datasets::NewShard shard;
    shard.key = sr.Required(sr.String("key"), "key");
    shard.samples = sr.Required(sr.Int("samples"), "samples");
    shard.bytes = sr.Required(sr.Int("bytes"), "bytes");
    shard.sha256 = sr.Required(sr.String("sha256"), "sha256");
    TF_RETURN_IF_ERROR(sr.Finish());
    d.shards.push_back(std::move(shard));
  }
  return d;
}

// A listing's entry: the index without its shards.
Json Summary(const datasets::DatasetIndex& d) {
  Json j = datasets::DatasetIndexToJson(d);
  j.erase("shards");
  j.erase("shard_count");
  return j;
}

}  // namespace

void AddDatasetRoutes(Router& router, Services& s, datasets::DatasetService& datasets) {
  router.Add("POST", "/v1/datasets", [&s, &datasets](Context& ctx) -> awaitable<http::Response> {
    auto request = ParseNewDataset(ctx.request.body);
    if (!request.ok()) co_return ErrorResponse(request.status());
    auto created = co_await RunBlocking(
        s.pool, [&] { return datasets.Create(ctx.principal.project_id, *request); });
    if (!created.ok()) co_return ErrorResponse(created.status());
    co_return JsonResponse(201, datasets::DatasetIndexToJson(*created));
  });

  router.Add("GET", "/v1/datasets", [&s, &datasets](Context& ctx) -> awaitable<http::Response> {
    auto all =
        co_await RunBlocking(s.pool, [&] { return datasets.List(ctx.principal.project_id); });
    if (!all.ok()) co_return ErrorResponse(all.status());
    Json out = Json::array();
    for (const auto& d : *all) out.push_back(Summary(d));
    co_return JsonResponse(200, {{"datasets", out}});
  });

  router.Add(
      "GET", "/v1/datasets/{name}", [&s, &datasets](Context& ctx) -> awaitable<http::Response> {
        auto index = co_await RunBlocking(
            s.pool, [&] { return datasets.Get(ctx.principal.project_id, ctx.Param("name")); });
        if (!index.ok()) co_return ErrorResponse(index.status());
        co_return JsonResponse(200, datasets::DatasetIndexToJson(*index));
      });

  router.Add(
      "DELETE", "/v1/datasets/{name}", [&s, &datasets](Context& ctx) -> awaitable<http::Response> {
        auto deleted = co_await RunBlocking(
            s.pool, [&] { return datasets.Delete(ctx.principal.project_id, ctx.Param("name")); });
        if (!deleted.ok()) co_return ErrorResponse(deleted.status());
        co_return JsonResponse(
            200, {{"deleted", ctx.Param("name")}, {"shard_objects_deleted", *deleted}});
      });
}

}  // namespace tf::api
