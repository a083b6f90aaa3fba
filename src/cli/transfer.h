// Files to objects and back for `tensorfleet cp` and `cat`: the streaming, checked transfers of
// client/object_client.h over the CLI's connection, with a progress display. Bodies stream from
// and to the disk (never whole in memory), every transfer is checked end to end against the
// SHA-256 the server keeps, and downloads land in a temporary file that replaces the target
// only when complete and checked.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "client/api_client.h"
#include "client/object_client.h"

namespace tf::cli {

inline constexpr std::string_view kObjectScheme = "tf://";

// tf://bucket/key: the key may be empty or hold any number of '/'.
struct ObjectUrl {
  std::string bucket;
  std::string key;
  std::string ToString() const { return std::string(kObjectScheme) + bucket + "/" + key; }
};

bool IsObjectUrl(std::string_view s);
// kInvalidArgument unless `s` is tf://BUCKET[/KEY].
Result<ObjectUrl> ParseObjectUrl(std::string_view s);

// "/v1/buckets/B/objects/KEY" with the key percent-encoded.
std::string ObjectTarget(const ObjectUrl& url);

// The local path for an object whose key, below the prefix being copied, is `relative`; never
// outside `dir` (see client::LocalPathFor).
using client::LocalPathFor;

// Uploads the regular file `path` to `dst` (content type "" lets the server choose). Returns the
// object's size.
Result<uint64_t> UploadFile(client::ApiClient& api, const std::filesystem::path& path,
                            const ObjectUrl& dst, const std::string& content_type);

// Uploads what stdin gives from where it stands to its end: a pipe, a socket or a terminal
// chunked, a file redirected to it with its size. Returns the object's size.
Result<uint64_t> UploadStdin(client::ApiClient& api, const ObjectUrl& dst,
                             const std::string& content_type);

// Copies `src` to `dst` on the server (the source's content type and metadata go with it).
// Returns the object's size.
Result<uint64_t> CopyObject(client::ApiClient& api, const ObjectUrl& src, const ObjectUrl& dst);

// Downloads `src` to the file `path` (its directory must exist; client::DownloadFile says what
// it does with a link, a device or a FIFO there). Returns the object's size.
Result<uint64_t> DownloadFile(client::ApiClient& api, const ObjectUrl& src,
                              const std::filesystem::path& path, bool follow_link);

// Hands the content of `src` to `sink` piece by piece, then checks it. A checksum mismatch is
// reported after the content has been handed over.
Status StreamObject(client::ApiClient& api, const ObjectUrl& src,
                    const std::function<Status(std::string_view)>& sink);

// Every key of `bucket` that starts with `prefix`, in order (all pages).
Result<std::vector<std::string>> ListKeys(client::ApiClient& api, const std::string& bucket,
                                          const std::string& prefix);

}  // namespace tf::cli
