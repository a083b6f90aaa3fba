// /v1/buckets/{bucket}/objects: the native object API. Uploads stream from the request body
// into the object service piece by piece, downloads stream from it, so neither is held in
// memory. Every service call runs on the blocking pool.
#include <memory>
#include <span>

#include "api/body_pump.h"
#include "api/errors.h"
#include "api/object_http.h"
#include "api/object_stream.h"
#include "api/services.h"
#include "base/ascii.h"
#include "base/log.h"
#include "http/url.h"
#include "objects/blob_format.h"

namespace tf::api {
namespace {

using Json = nlohmann::json;
using objects::ObjectReader;
using objects::Upload;

// The unit of reading the request body and writing it out; one block of the blob format.
constexpr size_t kPieceBytes = objects::kBlockBytes;

// Drops an upload (aborting it unless committed) on the pool: that touches the disk.
awaitable<void> Release(asio::thread_pool& pool, std::unique_ptr<Upload>& upload) {
  co_await RunBlocking(pool, [&upload] {
    upload.reset();
    return 0;
  });
}

// PUT with x-tf-copy-source: BUCKET/KEY (the key percent-encoded) and no body: a copy made on
// the server (ObjectService::Copy).
awaitable<http::Response> CopyObject(Services& s, Context& ctx, const std::string& source) {
  const std::optional<uint64_t> body = ctx.request.body_reader->content_length();
  if (!body || *body != 0) {
    co_return ErrorResponse(InvalidArgument("a copy (" + std::string(kCopySourceHeader) +
                                            ") takes no body: the content is the "
                                            "source object's"));
  }
  for (const auto& [name, value] : ctx.request.headers) {
    const std::string lower = AsciiLower(name);
    if (lower == kChecksumHeader || lower.rfind(kMetaPrefix, 0) == 0) {
      co_return ErrorResponse(InvalidArgument("a copy (" + std::string(kCopySourceHeader) +
                                              ") keeps the source's metadata and "
                                              "checksum: it takes no " +
                                              name));
    }
  }
  const size_t slash = source.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == source.size()) {
    co_return ErrorResponse(InvalidArgument(std::string(kCopySourceHeader) +
                                            " must be BUCKET/KEY, not '" + source.substr(0, 200) +
                                            "'"));
  }
  const std::string from_bucket = source.substr(0, slash);
  const std::string from_key = http::PercentDecode(source.substr(slash + 1), false);
  auto copied = co_await RunBlocking(s.pool, [&] {
    Result<objects::ObjectInfo> info = s.objects.Copy(
        ctx.principal.project_id, from_bucket, from_key, ctx.Param("bucket"), ctx.Param("key"));
    if (!info.ok()) {
      return Result<objects::ObjectInfo>(
          info.status().WithContext("copying " + from_bucket + "/" + from_key));
    }
    return info;
  });
  if (!copied.ok()) co_return ErrorResponse(copied.status());
  http::Response response = JsonResponse(200, ObjectToJson(*copied));
  response.headers.emplace_back("ETag", "\"" + copied->etag + "\"");
  co_return response;
}

awaitable<http::Response> PutObject(Services& s, Context& ctx) {
  if (const std::string& source = ctx.request.Header(kCopySourceHeader); !source.empty()) {
    co_return co_await CopyObject(s, ctx, source);
  }
  auto options = PutOptionsFromHeaders(ctx.request.headers);
  if (!options.ok()) co_return ErrorResponse(options.status());
  auto begun = co_await RunBlocking(s.pool, [&] {
    return s.objects.BeginPut(ctx.principal.project_id, ctx.Param("bucket"), ctx.Param("key"),
                              std::move(*options));
  });
  if (!begun.ok()) co_return ErrorResponse(begun.status());
  std::unique_ptr<Upload> upload = std::move(begun).value();

  http::BodyReader* body = ctx.request.body_reader;
  uint64_t read_bytes = 0;
  auto read = [body, &read_bytes](std::string& piece) -> awaitable<std::optional<Status>> {
    // No cost but for a short piece's tail: see S3Body::Read.
    piece.resize(PieceBytesFor(body->content_length(), read_bytes));
    Result<size_t> n = size_t{0};  // a body of known length is over once all of it is read
    if (!piece.empty()) n = co_await body->Read(std::span(piece));
    if (!n.ok()) co_return n.status();
    piece.resize(*n);
    read_bytes += *n;
    co_return std::nullopt;
  };
  auto write = [&upload](std::string_view piece) { return upload->Write(piece); };
  auto same = [](const Status& failed) { return failed; };
  std::optional<Status> failed = co_await PumpBody<Status>(s.pool, read, write, same);
  if (failed) {
    co_await Release(s.pool, upload);
    co_return ErrorResponse(*failed);
  }
  auto info = co_await RunBlocking(s.pool, [&] { return upload->Commit(); });
  co_await Release(s.pool, upload);
  if (!info.ok()) co_return ErrorResponse(info.status());
  http::Response response = JsonResponse(200, ObjectToJson(*info));
  response.headers.emplace_back("ETag", "\"" + info->etag + "\"");
  co_return response;
}

// GET and HEAD. Content up to one block is read (and checked) before answering, so damage there
// is a clean 500; larger content streams with a Content-Length, and damage found on the way
// cuts the connection before any bad block is sent.
awaitable<http::Response> GetObject(Services& s, Context& ctx, bool head) {
  auto opened = co_await RunBlocking(s.pool, [&] {
    return s.objects.Open(ctx.principal.project_id, ctx.Param("bucket"), ctx.Param("key"));
  });
  if (!opened.ok()) co_return ErrorResponse(opened.status());
  std::shared_ptr<ObjectReader> reader = std::move(opened).value();
  const objects::ObjectInfo& info = reader->info();

  http::Response response;
  SetObjectHeaders(info, response);
  uint64_t length = info.size;
  ByteRange range = ParseRange(ctx.request.Header("Range"), info.size);
  if (range.kind == ByteRange::kUnsatisfiable) {
    response = ErrorResponse(InvalidArgument("range '" + ctx.request.Header("Range") +
                                             "' is outside an object of " +
                                             std::to_string(info.size) + " bytes"));
    response.status = 416;
    response.headers.emplace_back("Content-Range", "bytes */" + std::to_string(info.size));
    co_return response;
  }
  if (range.kind == ByteRange::kPart) {
    (void)reader->SetRange(range.first, range.last);  // ParseRange keeps it inside the object
    length = range.last - range.first + 1;
    response.status = 206;
    response.headers.emplace_back("Content-Range", "bytes " + std::to_string(range.first) + "-" +
                                                       std::to_string(range.last) + "/" +
                                                       std::to_string(info.size));
  }
  response.content_length = length;
  if (head) co_return response;

  if (length <= kPieceBytes) {  // at most two blocks' pieces
    auto content = co_await RunBlocking(s.pool, [&] { return reader->ReadRest(); });
    if (!content.ok()) {
      spdlog::error("objects: {}", content.status().ToString());
      co_return ErrorResponse(content.status());
    }
    response.body = std::move(*content);
    response.content_length.reset();
    co_return response;
  }
  response.stream = StreamContent(s.pool, std::move(reader), "objects");
  co_return response;
}

awaitable<http::Response> ListObjects(Services& s, Context& ctx) {
  store::ListObjectsOptions options;
  const auto& q = ctx.request.query;
  if (auto it = q.find("prefix"); it != q.end()) options.prefix = it->second;
  if (auto it = q.find("delimiter"); it != q.end()) options.delimiter = it->second;
  if (auto it = q.find("start_after"); it != q.end()) options.start_after = it->second;
  if (auto it = q.find("limit"); it != q.end()) {
    try {
      options.limit = std::stoi(it->second);
    } catch (const std::exception&) {
      co_return ErrorResponse(InvalidArgument("'limit' must be a number"));
    }
  }
  auto listing = co_await RunBlocking(s.pool, [&] {
    return s.objects.List(ctx.principal.project_id, ctx.Param("bucket"), options);
  });
  if (!listing.ok()) co_return ErrorResponse(listing.status());
  Json objects = Json::array();
  for (const auto& info : listing->objects) objects.push_back(ObjectToJson(info));
  Json out = {{"objects", objects},
              {"common_prefixes", listing->common_prefixes},
              {"truncated", listing->truncated}};
  if (listing->truncated) out["next_start_after"] = listing->next_start_after;
  co_return JsonResponse(200, out);
}

}  // namespace

void AddObjectRoutes(Router& router, Services& s) {
  AddBucketRoutes(router, s);
  const std::string object = "/v1/buckets/{bucket}/objects/{key+}";
  // Each route is a coroutine of its own that awaits the handler (g++ 12 warns wrongly about
  // the frame's operator delete when a coroutine function is inlined into a plain lambda).
  router.Add(
      "PUT", object,
      [&s](Context& ctx) -> awaitable<http::Response> { co_return co_await PutObject(s, ctx); },
      Access::kProject, Body::kStreamed);
  router.Add("GET", object, [&s](Context& ctx) -> awaitable<http::Response> {
    co_return co_await GetObject(s, ctx, /*head=*/false);
  });
  router.Add("HEAD", object, [&s](Context& ctx) -> awaitable<http::Response> {
    co_return co_await GetObject(s, ctx, /*head=*/true);
  });
  router.Add("DELETE", object, [&s](Context& ctx) -> awaitable<http::Response> {
    Status st = co_await RunBlocking(s.pool, [&] {
      return s.objects.Delete(ctx.principal.project_id, ctx.Param("bucket"), ctx.Param("key"));
    });
    if (!st.ok()) co_return ErrorResponse(st);
    co_return JsonResponse(200, {{"deleted", ctx.Param("key")}});
  });
  router.Add(
      "GET", "/v1/buckets/{bucket}/objects",
      [&s](Context& ctx) -> awaitable<http::Response> { co_return co_await ListObjects(s, ctx); });
}

}  // namespace tf::api
