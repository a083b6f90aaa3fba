// `tensorfleet dataset create|list|describe|delete` (docs/datasets.md; `read` is in
// dataset_read.cc): samples packed into shards that are uploaded as objects, then the index written
// in one request, so a create that stops half way leaves no dataset.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <memory>

#include "base/crypto.h"
#include "cli/commands.h"
#include "cli/dataset_read.h"
#include "cli/progress.h"
#include "cli/shard_uploader.h"
#include "cli/table.h"
#include "client/object_client.h"
#include "datasets/dataset_index.h"
#include "datasets/packer.h"
#include "http/http.h"
#include "jobs/quantities.h"

namespace tf::cli {
namespace {

namespace fs = std::filesystem;

struct DatasetCreateFlags {
  std::string name;
  std::vector<std::string> from;
  std::string format = "files";
  std::string shard_size = "64MiB";
  std::string bucket = "datasets";
};

struct DatasetDescribeFlags {
  std::string name;
  bool shards = false;  // list every shard
};

struct DatasetDeleteFlags {
  std::string name;
};

// "64MiB", "64Mi", "1.5GB", "4096B", "1000" -> bytes.
Result<int64_t> ParseShardSize(const std::string& given) {
  std::string text = given;
  if (text.size() > 1 && text.back() == 'B') text.pop_back();  // "64MiB", "1.5GB", "4096B"
  auto bytes = jobs::ParseMemory(text);
  if (!bytes.ok() || *bytes < 4096 || *bytes > (int64_t{4} << 30)) {
    return InvalidArgument(
        "--shard-size must be a size from 4KiB to 4GiB such as 64MiB (Ki, Mi, Gi binary; k, M, "
        "G decimal; a trailing B optional), got '" +
        given + "'");
  }
  return *bytes;
}

Status EnsureBucket(client::ApiClient& api, const std::string& bucket) {
  auto r = api.Call("POST", "/v1/buckets", Json{{"name", bucket}});
  if (r.ok() || r.status().code() == StatusCode::kAlreadyExists) return OkStatus();
  return r.status();
}

// Deletes what a create that failed had uploaded; what cannot be deleted is only reported.
void RemoveUploaded(client::ObjectClient& objects, const std::string& bucket,
                    const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    Status st = objects.Delete(bucket, key);
    if (!st.ok()) std::cerr << "warning: could not remove tf://" << bucket << "/" << key << "\n";
  }
}

// What the server did with an index request whose answer never came (the connection dropped,
// or it timed out): a server finishes a request whose client went away, so the dataset may
// exist all the same. Created: it is there with the shards under `prefix`. Someone else's: a
// dataset of that name with other shards (ours are in no index). Unknown: not there yet, or the
// server cannot be asked; it may still be writing the index, so the shards must stay.
enum class LostCreate { kCreated, kSomeoneElses, kUnknown };

LostCreate LookUpLostCreate(client::ApiClient& api, const std::string& name,
                            const std::string& bucket, const std::string& prefix) {
  auto found = api.Call("GET", "/v1/datasets/" + http::PercentEncode(name));
  if (!found.ok()) return LostCreate::kUnknown;
  const Json& shards = (*found)["shards"];
  if (!shards.is_array() || shards.empty()) return LostCreate::kSomeoneElses;
  const Json& first = shards.front();
  const bool ours =
      first.value("bucket", "") == bucket && first.value("key", "").rfind(prefix, 0) == 0;
  return ours ? LostCreate::kCreated : LostCreate::kSomeoneElses;
}

// The index is written in one request, which the server takes up to its limit on a request's
// body (http::ServerOptions::max_body_bytes), less room for the rest of the request.
uint64_t IndexLimitBytes() { return http::ServerOptions{}.max_body_bytes - (64 << 10); }

// A shard's entry in that request at its longest for this dataset (its key under a prefix as
// long as the real one, counts of as many digits as the shard size has): what the checks count.
uint64_t IndexEntryBytes(const std::string& name, int64_t shard_size) {
  Json entry{{"key", name + "/" + std::string(16, '0') + "/shard-000000.tfs"},
             {"samples", shard_size},
             {"bytes", shard_size},
             {"sha256", std::string(64, '0')}};
  return entry.dump().size() + 1;
}

// Too many shards for one index: about `shards` of `shard_size`, and a size that would do
// (shards go down as the size goes up).
Status TooManyShards(const std::string& name, uint64_t shards, int64_t shard_size,
                     uint64_t entry_bytes) {
  int64_t enough = shard_size * 2;
  while (enough < (int64_t{4} << 30) &&
         static_cast<double>(shards) * entry_bytes * shard_size / enough > IndexLimitBytes()) {
    enough *= 2;
  }
  return InvalidArgument("dataset " + name + " would need about " + std::to_string(shards) +
                         " shards of " + FormatBytes(shard_size) +
                         ", more than one index can list (the server takes " +
                         FormatBytes(IndexLimitBytes()) + " of index in one request, about " +
                         std::to_string(IndexLimitBytes() / entry_bytes) +
                         " shards): give a larger --shard-size, such as " + FormatBytes(enough));
}

// The fewest shards the source can make: a file of `files` format larger than a shard is a
// shard of its own, the rest fill shards of at most shard_size. Lines (jsonl, text) are taken
// to be no longer than a shard, as they nearly always are; a source of longer ones is caught
// while packing instead.
uint64_t FewestShards(const std::vector<fs::path>& sources, const std::string& format,
                      int64_t shard_size) {
  uint64_t alone = 0, rest = 0;
  for (const auto& file : sources) {
    std::error_code ec;
    const uint64_t size = fs::file_size(file, ec);
    if (ec) continue;
    if (format == "files" && size > static_cast<uint64_t>(shard_size)) {
      ++alone;
    } else {
      rest += size;
    }
  }
  return alone + rest / static_cast<uint64_t>(shard_size);
}

Status Create(const client::Connection& conn, const DatasetCreateFlags& f) {
  TF_RETURN_IF_ERROR(datasets::ValidateDatasetName(f.name));
  TF_RETURN_IF_ERROR(datasets::ValidateSourceFormat(f.format));
  TF_ASSIGN_OR_RETURN(int64_t shard_size, ParseShardSize(f.shard_size));
  int hidden = 0;
  TF_ASSIGN_OR_RETURN(std::vector<fs::path> files, datasets::ListSourceFiles(f.from, &hidden));
  if (hidden > 0) {
    std::cerr << "left out " << hidden << " hidden file" << (hidden == 1 ? "" : "s") << " or folder"
              << (hidden == 1 ? "" : "s") << " (names starting with '.'); name a file to pack it\n";
  }
  uint64_t input_bytes = 0;
  for (const auto& file : files) {
    std::error_code ec;
    input_bytes += fs::file_size(file, ec);
  }
  // Too many shards for one index is known before anything is uploaded, mostly.
  const uint64_t entry_bytes = IndexEntryBytes(f.name, shard_size);
  if (const uint64_t fewest = FewestShards(files, f.format, shard_size);
      fewest * entry_bytes > IndexLimitBytes()) {
    return TooManyShards(f.name, fewest, shard_size, entry_bytes);
  }
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  auto existing = api.Call("GET", "/v1/datasets/" + http::PercentEncode(f.name));
  if (existing.ok()) return AlreadyExists("dataset '" + f.name + "' already exists");
  if (existing.status().code() != StatusCode::kNotFound) return existing.status();
  TF_RETURN_IF_ERROR(EnsureBucket(api, f.bucket));
  TF_ASSIGN_OR_RETURN(std::unique_ptr<client::ObjectClient> objects,
                      client::MakeHttpObjectClient(api.server(), api.token()));

  // Shards go under a prefix of their own, so that they replace nothing, not even the shards of
  // a dataset of this name deleted and created again.
  const std::string prefix = f.name + "/" + RandomHex(8) + "/";
  Json shards = Json::array();
  uint64_t emitted = 0;  // shards handed to the uploader
  uint64_t shard_bytes = 0;
  uint64_t index_bytes = 0;
  uint64_t consumed = 0;  // of input_bytes, packed so far
  Progress progress("packing " + f.name, input_bytes);
  // Uploads each shard while the next one is packed.
  ShardUploader uploader(*objects, f.bucket);
  datasets::Packer packer(shard_size, [&](std::string_view shard, uint64_t samples) -> Status {
    char name[32];
    std::snprintf(name, sizeof name, "shard-%06llu.tfs", static_cast<unsigned long long>(emitted));
    std::string key = prefix + name;
    std::string sha = Sha256Hex(shard);
    Json entry{{"key", key}, {"samples", samples}, {"bytes", shard.size()}, {"sha256", sha}};
    index_bytes += entry.dump().size() + 1;
    if (index_bytes > IndexLimitBytes()) {  // more shards than the input's size promised
      const uint64_t projected = static_cast<uint64_t>(
          static_cast<double>(emitted + 1) * input_bytes / std::max<uint64_t>(consumed, 1));
      return TooManyShards(f.name, std::max<uint64_t>(projected, emitted + 1), shard_size,
                           entry_bytes);
    }
    TF_RETURN_IF_ERROR(uploader.Submit(std::move(key), shard, sha));
    ++emitted;
    shard_bytes += shard.size();
    shards.push_back(std::move(entry));
    return OkStatus();
  });
  Status packed = OkStatus();
  for (const auto& file : files) {
    packed = packer.AddFile(file, f.format, [&](uint64_t n) {
      consumed += n;
      progress.Add(n);
    });
    if (!packed.ok()) break;
  }
  if (packed.ok()) packed = packer.Finish();
  // The last upload, or the one in flight when packing failed, ends before anything goes on.
  Status upload = uploader.Finish();
  if (packed.ok()) packed = upload;
  progress.Finish();
  const std::vector<std::string>& uploaded = uploader.uploaded();
  if (packed.ok()) {
    Json request{{"name", f.name},
                 {"bucket", f.bucket},
                 {"shard_size", shard_size},
                 {"format", f.format},
                 {"shards", shards}};
    auto created = api.Call("POST", "/v1/datasets", request, std::chrono::minutes(5));
    packed = created.status();
    if (!created.ok() && !api.last_call_answered()) {
      switch (LookUpLostCreate(api, f.name, f.bucket, prefix)) {
        case LostCreate::kCreated:
          std::cerr << "note: the server's answer to the index was lost ("
                    << created.status().message() << "), but it made the dataset\n";
          packed = OkStatus();
          break;
        case LostCreate::kSomeoneElses:
          packed = AlreadyExists("dataset '" + f.name +
                                 "' was created by someone else while this one was packed");
          break;
        case LostCreate::kUnknown:
          // Removing the shards now could leave an index the server is still writing pointing
          // at nothing: they stay, and the user is told how to settle it.
          return Status(
              created.status().code(),
              created.status().message() + "\nthe server may still be writing the index " +
                  "of dataset '" + f.name + "': its " + std::to_string(uploaded.size()) +
                  " shards are kept under tf://" + f.bucket + "/" + prefix +
                  ". If `tensorfleet dataset describe " + f.name +
                  "` does not find it in a few minutes, remove them with `tensorfleet rm -r tf://" +
                  f.bucket + "/" + prefix + "`");
      }
    }
  }
  if (!packed.ok()) {
    RemoveUploaded(*objects, f.bucket, uploaded);
    return packed;
  }
  std::cout << "dataset " << f.name << ": " << packer.samples() << " samples in " << packer.shards()
            << " shards, " << FormatBytes(shard_bytes) << " (tf://" << f.bucket << "/" << prefix
            << ", " << FormatTransfer(input_bytes, progress.elapsed()) << " packed)\n";
  return OkStatus();
}

Status List(const client::Connection& conn) {
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", "/v1/datasets"));
  if (conn.json) {
    PrintJson(r);
    return OkStatus();
  }
  Table t({"name", "samples", "size", "format", "created"});
  for (const Json& d : r["datasets"]) {
    t.Add({Cell(d["name"]), Cell(d["samples"]), FormatBytes(d.value("bytes", uint64_t{0})),
           Cell(d["format"]), Cell(d["created_at"])});
  }
  t.Print(std::cout);
  return OkStatus();
}

Status Describe(const client::Connection& conn, const std::string& name, bool shards) {
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  TF_ASSIGN_OR_RETURN(Json d, api.Call("GET", "/v1/datasets/" + http::PercentEncode(name)));
  if (conn.json) {
    PrintJson(d);
    return OkStatus();
  }
  std::cout << "dataset " << Cell(d["name"]) << "\n"
            << "  created     " << Cell(d["created_at"]) << "\n"
            << "  samples     " << Cell(d["samples"]) << "\n"
            << "  size        " << FormatBytes(d.value("bytes", uint64_t{0})) << " in "
            << Cell(d["shard_count"]) << " shards of up to "
            << FormatBytes(d.value("shard_size", uint64_t{0})) << "\n"
            << "  format      " << Cell(d["format"]) << "\n";
  if (!shards) return OkStatus();
  Table t({"shard", "first sample", "samples", "size", "object", "sha256"});
  for (const Json& s : d["shards"]) {
    t.Add({Cell(s["ordinal"]), Cell(s["first_sample"]), Cell(s["samples"]),
           FormatBytes(s.value("bytes", uint64_t{0})),
           "tf://" + s.value("bucket", "") + "/" + s.value("key", ""),
           s.value("sha256", "").substr(0, 12)});
  }
  t.Print(std::cout);
  return OkStatus();
}

}  // namespace

void AddDatasetCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* dataset = app.add_subcommand("dataset", "Datasets packed into shards for training");
  dataset->require_subcommand(1);
  {
    auto f = std::make_shared<DatasetCreateFlags>();
    auto* cmd = dataset->add_subcommand(
        "create", "Pack files, or lines of JSONL or text files, into shards and upload them");
    cmd->add_option("name", f->name, "Dataset name")->required();
    cmd->add_option("--from", f->from, "Files and directories holding the samples")
        ->required()
        ->expected(1, -1);
    cmd->add_option("--format", f->format, "files (a sample each), jsonl or text (a line each)")
        ->capture_default_str();
    cmd->add_option("--shard-size", f->shard_size, "Target shard size")->capture_default_str();
    cmd->add_option("--bucket", f->bucket, "Bucket for the shards (created if missing)")
        ->capture_default_str();
    RunStatus(cmd, exit_code, [&conn, f] { return Create(conn, *f); });
  }
  {
    auto* cmd = dataset->add_subcommand("list", "List this project's datasets");
    RunStatus(cmd, exit_code, [&conn] { return List(conn); });
  }
  {
    auto f = std::make_shared<DatasetDescribeFlags>();
    auto* cmd = dataset->add_subcommand("describe", "Show a dataset and its shards");
    cmd->add_option("name", f->name, "Dataset name")->required();
    cmd->add_flag("--shards", f->shards, "List every shard");
    RunStatus(cmd, exit_code, [&conn, f] { return Describe(conn, f->name, f->shards); });
  }
  {
    auto f = std::make_shared<DatasetDeleteFlags>();
    auto* cmd = dataset->add_subcommand("delete", "Delete a dataset and its shard objects");
    cmd->add_option("name", f->name, "Dataset name")->required();
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r,
                          api.Call("DELETE", "/v1/datasets/" + http::PercentEncode(f->name)));
      std::cout << "deleted dataset " << f->name << " (" << Cell(r["shard_objects_deleted"])
                << " shard objects)\n";
      return OkStatus();
    });
  }
  AddDatasetReadCommand(dataset, conn, exit_code);
}

}  // namespace tf::cli
