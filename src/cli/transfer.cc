#include "cli/transfer.h"

#include <unistd.h>

#include <memory>

#include "cli/progress.h"
#include "http/url.h"

namespace tf::cli {
namespace {

namespace fs = std::filesystem;

std::string Basename(std::string_view key) {
  size_t slash = key.rfind('/');
  return std::string(slash == std::string_view::npos ? key : key.substr(slash + 1));
}

client::ObjectExchange ExchangeOf(client::ApiClient& api) {
  return [&api](http::ClientRequest request) { return api.Exchange(std::move(request)); };
}

// A progress display that appears when the transfer learns its size and is cleared when this
// goes out of scope.
class ProgressHooks {
 public:
  explicit ProgressHooks(std::string label) : label_(std::move(label)) {}
  client::TransferProgress hooks() {
    return {
        .start = [this](uint64_t total) { progress_ = std::make_unique<Progress>(label_, total); },
        .add =
            [this](uint64_t bytes) {
              if (progress_) progress_->Add(bytes);
            }};
  }

 private:
  std::string label_;
  std::unique_ptr<Progress> progress_;
};

}  // namespace

bool IsObjectUrl(std::string_view s) { return s.substr(0, kObjectScheme.size()) == kObjectScheme; }

Result<ObjectUrl> ParseObjectUrl(std::string_view s) {
  if (!IsObjectUrl(s)) return InvalidArgument("'" + std::string(s) + "' is not tf://BUCKET/KEY");
  s.remove_prefix(kObjectScheme.size());
  size_t slash = s.find('/');
  ObjectUrl url{std::string(s.substr(0, slash)), ""};
  if (slash != std::string_view::npos) url.key = std::string(s.substr(slash + 1));
  if (url.bucket.empty()) return InvalidArgument("'tf://" + std::string(s) + "' names no bucket");
  return url;
}

std::string ObjectTarget(const ObjectUrl& url) { return client::ObjectTarget(url.bucket, url.key); }

Result<uint64_t> UploadFile(client::ApiClient& api, const fs::path& path, const ObjectUrl& dst,
                            const std::string& content_type) {
  ProgressHooks progress(path.filename().string());
  client::UploadOptions options;
  options.content_type = content_type;
  return client::UploadFile(ExchangeOf(api), path, dst.bucket, dst.key, options, progress.hooks());
}

Result<uint64_t> UploadStdin(client::ApiClient& api, const ObjectUrl& dst,
                             const std::string& content_type) {
  ProgressHooks progress("stdin");
  client::UploadOptions options;
  options.content_type = content_type;
  options.allow_stream = true;
  return client::UploadDescriptor(ExchangeOf(api), STDIN_FILENO, "stdin", dst.bucket, dst.key,
                                  options, progress.hooks());
}

Result<uint64_t> CopyObject(client::ApiClient& api, const ObjectUrl& src, const ObjectUrl& dst) {
  http::ClientRequest request;
  request.method = "PUT";
  request.target = ObjectTarget(dst);
  request.headers.emplace_back("x-tf-copy-source", src.bucket + "/" + http::PercentEncode(src.key));
  TF_ASSIGN_OR_RETURN(http::ClientResponse response, api.Exchange(std::move(request)));
  auto info = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object() || !info.contains("size") || !info["size"].is_number_unsigned()) {
    return Internal("the server's answer to copying " + src.ToString() +
                    " is not an object's "
                    "description");
  }
  return info["size"].get<uint64_t>();
}

Status StreamObject(client::ApiClient& api, const ObjectUrl& src,
                    const std::function<Status(std::string_view)>& sink) {
  ProgressHooks progress(Basename(src.key));
  return client::StreamObject(ExchangeOf(api), src.bucket, src.key, sink, progress.hooks());
}

Result<uint64_t> DownloadFile(client::ApiClient& api, const ObjectUrl& src, const fs::path& path,
                              bool follow_link) {
  ProgressHooks progress(Basename(src.key));
  return client::DownloadFile(ExchangeOf(api), src.bucket, src.key, path, progress.hooks(),
                              follow_link);
}

Result<std::vector<std::string>> ListKeys(client::ApiClient& api, const std::string& bucket,
                                          const std::string& prefix) {
  return client::ListObjectKeys(ExchangeOf(api), bucket, prefix);
}

}  // namespace tf::cli
