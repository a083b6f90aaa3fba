#include "worker/checkpoint_manifest.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "base/sha256_stream.h"

namespace tf::worker {
namespace {

using Json = nlohmann::json;

constexpr int kVersion = 1;
constexpr int kSeqDigits = 10;

std::string SeqName(int64_t seq) {
  char text[32];
  std::snprintf(text, sizeof text, "%0*lld", kSeqDigits, static_cast<long long>(seq));
  return text;
}

Result<Json> ParseObject(std::string_view text, const char* what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument(std::string(what) + " is not a JSON object");
  if (!j["version"].is_number_integer() || j["version"].get<int64_t>() != kVersion) {
    return InvalidArgument(std::string(what) + " has an unknown version");
  }
  if (!j["seq"].is_number_integer() || j["seq"].get<int64_t>() < 1) {
    return InvalidArgument(std::string(what) + " has no valid seq");
  }
  return j;
}

Result<ManifestEntry> ParseEntry(const Json& f, size_t index) {
  const std::string where = "manifest file " + std::to_string(index) + ": ";
  if (!f.is_object()) return InvalidArgument(where + "not an object");
  ManifestEntry e;
  if (!f.contains("path") || !f["path"].is_string() ||
      !IsSafeRelativePath(e.path = f["path"].get<std::string>())) {
    return InvalidArgument(where + "no safe relative path");
  }
  if (!f.contains("size") || !f["size"].is_number_unsigned()) {
    return InvalidArgument(where + e.path + ": no size");
  }
  e.size = f["size"].get<uint64_t>();
  if (!f.contains("sha256") || !f["sha256"].is_string() ||
      !IsSha256Hex(e.sha256 = f["sha256"].get<std::string>())) {
    return InvalidArgument(where + e.path + ": no SHA-256");
  }
  if (!f.contains("mode") || !f["mode"].is_number_unsigned() || f["mode"].get<uint64_t>() > 07777) {
    return InvalidArgument(where + e.path + ": no valid mode");
  }
  e.mode = f["mode"].get<uint32_t>();
  return e;
}

}  // namespace

CheckpointKeys::CheckpointKeys(std::string prefix) {
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  base_ = prefix.empty() ? "" : prefix + "/";
}

std::string CheckpointKeys::Blob(std::string_view sha256) const {
  return BlobsPrefix() + std::string(sha256);
}
std::string CheckpointKeys::BlobsPrefix() const { return base_ + "blobs/"; }
std::string CheckpointKeys::Manifest(int64_t seq) const {
  return ManifestsPrefix() + SeqName(seq) + ".json";
}
std::string CheckpointKeys::ManifestsPrefix() const { return base_ + "manifests/"; }
std::string CheckpointKeys::Latest() const { return base_ + "latest"; }

int64_t CheckpointKeys::ManifestSeq(std::string_view key) const {
  const std::string prefix = ManifestsPrefix();
  if (key.substr(0, prefix.size()) != prefix) return -1;
  key.remove_prefix(prefix.size());
  if (key.size() != kSeqDigits + 5 || key.substr(kSeqDigits) != ".json") return -1;
  int64_t seq = -1;
  auto [end, ec] = std::from_chars(key.data(), key.data() + kSeqDigits, seq);
  if (ec != std::errc() || end != key.data() + kSeqDigits || seq < 1) return -1;
  return seq;
}

bool IsSafeRelativePath(std::string_view path) {
  if (path.empty()) return false;
  for (;;) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string_view::npos) {
      return false;
    }
    if (slash == std::string_view::npos) return true;
    path.remove_prefix(slash + 1);
  }
}

std::string ManifestToJson(const Manifest& manifest) {
  Json files = Json::array();
  for (const auto& f : manifest.files) {
    files.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}, {"mode", f.mode}});
  }
  return Json{{"version", kVersion}, {"seq", manifest.seq}, {"files", files}}.dump();
}

Result<Manifest> ParseManifest(std::string_view json) {
  TF_ASSIGN_OR_RETURN(Json j, ParseObject(json, "the manifest"));
  if (!j["files"].is_array()) return InvalidArgument("the manifest has no list of files");
  Manifest m;
  m.seq = j["seq"].get<int64_t>();
  std::set<std::string> paths;
  for (size_t i = 0; i < j["files"].size(); ++i) {
    TF_ASSIGN_OR_RETURN(ManifestEntry e, ParseEntry(j["files"][i], i));
    if (!paths.insert(e.path).second) {
      return InvalidArgument("the manifest lists " + e.path + " twice");
    }
    m.files.push_back(std::move(e));
  }
  // A file cannot also be a directory of another one.
  for (const auto& p : paths) {
    for (size_t slash = p.find('/'); slash != std::string::npos; slash = p.find('/', slash + 1)) {
      if (paths.count(p.substr(0, slash))) {
        return InvalidArgument("the manifest lists " + p.substr(0, slash) +
                               " both as a file and as a directory");
      }
    }
  }
  std::sort(m.files.begin(), m.files.end(),
            [](const ManifestEntry& a, const ManifestEntry& b) { return a.path < b.path; });
  return m;
}

std::string LatestToJson(int64_t seq) {
  return Json{
      {"version", kVersion}, {"seq", seq}, {"manifest", "manifests/" + SeqName(seq) + ".json"}}
      .dump();
}

Result<int64_t> ParseLatest(std::string_view json) {
  TF_ASSIGN_OR_RETURN(Json j, ParseObject(json, "the latest pointer"));
  int64_t seq = j["seq"].get<int64_t>();
  if (!j["manifest"].is_string() ||
      j["manifest"].get<std::string>() != "manifests/" + SeqName(seq) + ".json") {
    return InvalidArgument("the latest pointer names another manifest than its seq");
  }
  return seq;
}

}  // namespace tf::worker
