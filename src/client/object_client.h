// The worker's view of the object service (checkpoints, logs, code bundles, outputs), and the
// streaming transfers beneath it that `tensorfleet cp` shares.
//
// Bodies stream from and to the disk, never whole in memory (except PutBytes/GetBytes), and
// every transfer is checked end to end against the SHA-256 the server keeps. A download lands in
// a temporary file beside its target (".NAME.tmp-XXXXXXXX": a dot name, so a checkpoint sync
// never picks it up) that replaces the target only once it is complete and checked.
//
// Errors are the server's own codes (kNotFound, kInvalidArgument, kPermissionDenied, ...), with
// kUnavailable when the server cannot be reached; no call retries by itself.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "http/http.h"

namespace tf::client {

// The header that carries an object's SHA-256 (hex) both ways: a PUT is stored only if the
// content matches it, and a GET answers with it (api/object_http.h).
inline constexpr const char* kChecksumHeader = "x-tf-checksum-sha256";

// One seam for every object effect of the worker: tests of the other pieces use the in-memory
// implementation (memory_object_client.h), the worker the HTTP one. Implementations are
// thread-safe.
class ObjectClient {
 public:
  virtual ~ObjectClient() = default;

  // Creates the bucket in the token's project; OK if it is there already.
  virtual Status EnsureBucket(const std::string& bucket) = 0;
  // Uploads the regular file, streamed. Replaces any object of that key, atomically.
  virtual Status PutFile(const std::string& bucket, const std::string& key,
                         const std::filesystem::path& file) = 0;
  // As PutFile, but the object is stored only if what was read from the file has SHA-256
  // `sha256` (hex); otherwise nothing is stored and the result is kAborted (the file changed
  // after it was hashed).
  virtual Status PutFileChecked(const std::string& bucket, const std::string& key,
                                const std::filesystem::path& file, const std::string& sha256) = 0;
  virtual Status PutBytes(const std::string& bucket, const std::string& key,
                          std::string_view bytes) = 0;
  // As PutBytes, for a caller that has hashed the bytes already (`sha256`, hex): they are not
  // hashed again here, and are stored only if that is their SHA-256 (otherwise
  // kInvalidArgument and nothing is stored).
  virtual Status PutBytesChecked(const std::string& bucket, const std::string& key,
                                 std::string_view bytes, const std::string& sha256) = 0;
  // The object's content; nullopt if there is no such object (or no such bucket).
  virtual Result<std::optional<std::string>> GetBytes(const std::string& bucket,
                                                      const std::string& key) = 0;
  // Downloads to `dest` (its directory must exist) through a temporary file renamed into place.
  // kNotFound if there is no such object; `dest` is untouched by any failure.
  virtual Status GetToFile(const std::string& bucket, const std::string& key,
                           const std::filesystem::path& dest) = 0;
  // Every key of the bucket that starts with `prefix`, in byte order (all pages).
  virtual Result<std::vector<std::string>> ListKeys(const std::string& bucket,
                                                    const std::string& prefix) = 0;
  // Deletes the object; OK if it is already gone.
  virtual Status Delete(const std::string& bucket, const std::string& key) = 0;
};

// An ObjectClient over the server's native object API (/v1/buckets/...), authenticated with
// `token`. kInvalidArgument if server_url does not parse. Calls on several threads each use a
// connection of their own.
Result<std::unique_ptr<ObjectClient>> MakeHttpObjectClient(const std::string& server_url,
                                                           const std::string& token);

// ---- The transfers, over any way of reaching the server (the CLI brings its own) ----

// Sends one authenticated request to the object API. A 2xx answer is returned; any other comes
// back as the server's error.
using ObjectExchange = std::function<Result<http::ClientResponse>(http::ClientRequest)>;

// Sees a transfer's bytes go by (the CLI draws a progress bar from it). Either may be empty.
struct TransferProgress {
  std::function<void(uint64_t total)> start;  // once, before any bytes; 0 when unknown
  std::function<void(uint64_t bytes)> add;
};

struct UploadOptions {
  std::string content_type;     // "": the server's default
  std::string expected_sha256;  // hex; when set, other content is refused (kAborted)
  // Whether a pipe, socket or character device is read to its end (stdin); otherwise anything
  // but a regular file is refused.
  bool allow_stream = false;
};

// "/v1/buckets/B/objects/KEY", both percent-encoded.
std::string ObjectTarget(std::string_view bucket, std::string_view key);

// Streams the regular file `path` to bucket/key and checks the server's SHA-256 of it against
// what was sent. With options.allow_stream, a pipe, socket or character device is read to its
// end instead (chunked; progress.start gets 0). Returns the size.
Result<uint64_t> UploadFile(const ObjectExchange& exchange, const std::filesystem::path& path,
                            const std::string& bucket, const std::string& key,
                            const UploadOptions& options, const TransferProgress& progress = {});
// The same from an open descriptor, from where it stands (stdin: a file a shell has read part
// of sends the rest); `path` names it in errors. The descriptor stays open.
Result<uint64_t> UploadDescriptor(const ObjectExchange& exchange, int fd,
                                  const std::filesystem::path& path, const std::string& bucket,
                                  const std::string& key, const UploadOptions& options,
                                  const TransferProgress& progress = {});

// Hands the object's content to `sink` piece by piece, then checks it against the server's
// SHA-256. A mismatch (kInternal) is reported after the content has been handed over.
Status StreamObject(const ObjectExchange& exchange, const std::string& bucket,
                    const std::string& key, const std::function<Status(std::string_view)>& sink,
                    const TransferProgress& progress = {});

// Downloads bucket/key to `path` through a temporary file beside it, renamed over `path` once
// the content is whole and checked; a file that was there keeps its permissions. A device or
// FIFO (and any path under /dev/ or /proc/, such as /dev/stdout) is written into, never
// replaced; a directory is refused before anything is fetched. A symlink at `path` is replaced
// by the file, unless `follow_link` (a single file the user named): then the file it names is
// replaced and the link stays. Returns the size.
Result<uint64_t> DownloadFile(const ObjectExchange& exchange, const std::string& bucket,
                              const std::string& key, const std::filesystem::path& path,
                              const TransferProgress& progress = {}, bool follow_link = false);

// Makes SIGINT, SIGTERM and SIGHUP (where nothing else handles them) remove the temporary
// files of the downloads in progress before the process ends as the signal would end it: for
// a command whose user may stop it half way (`tensorfleet cp`).
void RemoveDownloadTempsOnSignal();

// Every key of `bucket` that starts with `prefix`, in order, asking for pages of `page_size`
// keys (0: the server's default, 1000) until the last.
Result<std::vector<std::string>> ListObjectKeys(const ObjectExchange& exchange,
                                                const std::string& bucket,
                                                const std::string& prefix, int page_size = 0);

// The local path for an object whose key, below the prefix being copied, is `relative`.
// kInvalidArgument if that would leave `dir`: an absolute key, or one with "", "." or ".."
// segments or a NUL. Keys come from the server and are never trusted as paths.
Result<std::filesystem::path> LocalPathFor(const std::filesystem::path& dir,
                                           std::string_view relative);

}  // namespace tf::client
