// The body of a GET of object content, shared by the native and the S3 API.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/async.h"
#include "http/http.h"
#include "objects/object_service.h"

namespace tf::api {

// Content is checked and sent this much at a time.
inline constexpr uint64_t kSendPieceBytes = uint64_t{8} << 20;
// A file's content is checked up to this many pieces ahead of the one being sent.
inline constexpr int kCheckAheadPieces = 3;

// Streams the rest of `reader`'s range. Content in a local file is read and checked a block at
// a time (its CRC-32C), which leaves it in the page cache, and then sent from there with
// sendfile, the next pieces (up to kCheckAheadPieces, one at a time in order) checked on `pool`
// while one is sent; other content is read, checked and written piece by piece. Damage found on the
// way cuts the response short before any bad byte is sent, and is logged with `api`.
std::function<awaitable<void>(http::StreamWriter&)> StreamContent(
    asio::thread_pool& pool, std::shared_ptr<objects::ObjectReader> reader, std::string api);

}  // namespace tf::api
