// `tensorfleet bucket ...`, `cp`, `ls`, `rm` and `cat`: buckets and objects, with tf://BUCKET/KEY
// naming an object and anything else a local path.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/table.h"
#include "cli/transfer.h"
#include "client/object_client.h"
#include "http/url.h"

namespace tf::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Counts what a cp moved and prints "upload: a -> tf://b/a (1.0 MiB)" per file; for several
// files, a summary at the end.
class Transfers {
 public:
  explicit Transfers(const char* verb) : verb_(verb), start_(Clock::now()) {}
  void Done(const std::string& from, const std::string& to, uint64_t bytes) {
    std::cout << verb_ << ": " << from << " -> " << to << " (" << FormatBytes(bytes) << ")\n";
    ++files_;
    bytes_ += bytes;
  }
  void Summary() const {
    if (files_ != 1) {
      std::cout << files_ << " files, " << FormatTransfer(bytes_, Clock::now() - start_) << "\n";
    } else {
      std::cout << FormatTransfer(bytes_, Clock::now() - start_) << "\n";
    }
  }

 private:
  const char* verb_;
  Clock::time_point start_;
  int files_ = 0;
  uint64_t bytes_ = 0;
};

struct BucketCreateFlags {
  std::string name;
};

struct BucketDeleteFlags {
  std::string name;
};

struct CpFlags {
  std::string from;  // a local path, tf://BUCKET/KEY or "-"
  std::string to;
  std::string content_type;
  bool recursive = false;
};

struct LsFlags {
  std::string where;  // "": the buckets
  bool recursive = false;
};

struct RmFlags {
  std::string where;
  bool recursive = false;
};

struct CatFlags {
  std::string where;
};

// "dir/" + "x" and "dir" + "x" both give "dir/x"; "" + "x" gives "x".
std::string JoinKey(const std::string& prefix, const std::string& rest) {
  if (prefix.empty() || prefix.back() == '/') return prefix + rest;
  return prefix + "/" + rest;
}

// The regular files under `dir` (links to files followed, under the link's own name), sorted.
// What cannot be read below it (a folder without permission, a link to a folder, a broken or
// looping link) is said on stderr and set in `*skipped`, the rest listed; `dir` itself not
// readable, or a listing that fails half way, is the error returned.
Status FilesUnder(const fs::path& dir, std::vector<fs::path>* files, Status* skipped) {
  auto skip = [&](const fs::path& path, const std::string& why) {
    std::cerr << "skipping " << path.string() << ": " << why << "\n";
    *skipped = InvalidArgument("some of " + dir.string() + " was not copied (see above)");
  };
  // The iterator's skip_permission_denied would pass over `dir` itself too.
  if (::access(dir.c_str(), R_OK | X_OK) != 0) {
    return InvalidArgument("cannot read " + dir.string() + ": " + std::strerror(errno));
  }
  std::error_code ec;
  // Folders that cannot be entered are passed over by the iterator and said here.
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& e = *it;
    std::error_code type_ec;
    const bool link = e.is_symlink(type_ec);
    const fs::file_status st = fs::status(e.path(), type_ec);
    if (type_ec) {
      skip(e.path(), link ? "a link that leads nowhere: " + type_ec.message() : type_ec.message());
    } else if (fs::is_regular_file(st)) {
      files->push_back(e.path());
    } else if (link && fs::is_directory(st)) {
      skip(e.path(), "a link to a folder (give the folder itself to copy it)");
    } else if (fs::is_directory(st) && ::access(e.path().c_str(), R_OK | X_OK) != 0) {
      skip(e.path(), std::strerror(errno));
    }
  }
  if (ec) return InvalidArgument("cannot read all of " + dir.string() + ": " + ec.message());
  std::sort(files->begin(), files->end());
  return OkStatus();
}

Status Upload(client::ApiClient& api, const fs::path& src, ObjectUrl dst, bool recursive,
              const std::string& content_type) {
  std::error_code ec;
  Transfers done("upload");
  if (fs::is_directory(src, ec)) {
    if (!recursive) return InvalidArgument(src.string() + " is a directory: use -r");
    std::vector<fs::path> files;
    Status skipped;
    TF_RETURN_IF_ERROR(FilesUnder(src, &files, &skipped));
    for (const auto& file : files) {
      // The file's own place under src, never where a link leads.
      ObjectUrl to{dst.bucket, JoinKey(dst.key, file.lexically_relative(src).generic_string())};
      TF_ASSIGN_OR_RETURN(uint64_t bytes, UploadFile(api, file, to, content_type));
      done.Done(file.string(), to.ToString(), bytes);
    }
    done.Summary();
    return skipped;
  }
  if (dst.key.empty() || dst.key.back() == '/') dst.key += src.filename().string();
  TF_ASSIGN_OR_RETURN(uint64_t bytes, UploadFile(api, src, dst, content_type));
  done.Done(src.string(), dst.ToString(), bytes);
  done.Summary();
  return OkStatus();
}

// `cp - tf://BUCKET/KEY`: what stdin gives, to its end (a pipe goes chunked, its size unknown
// until then). `./-` names a file called '-'.
Status CopyStdin(client::ApiClient& api, const ObjectUrl& dst, bool recursive,
                 const std::string& content_type) {
  if (recursive) return InvalidArgument("cp -r cannot read several files from stdin ('-')");
  if (dst.key.empty() || dst.key.back() == '/') {
    return InvalidArgument("give the key to store stdin as: " + dst.ToString() +
                           " names a folder (tf://BUCKET/KEY)");
  }
  Transfers done("upload");
  auto bytes = UploadStdin(api, dst, content_type);
  if (!bytes.ok()) return bytes.status().WithContext(dst.ToString());
  done.Done("stdin", dst.ToString(), *bytes);
  done.Summary();
  return OkStatus();
}

// What a recursive cp or rm of tf://BUCKET/KEY takes: the keys under KEY as a folder, so that
// tf://b/data takes data/x but never data2/x or database.csv.
std::string FolderPrefix(const std::string& key) {
  return key.empty() || key.back() == '/' ? key : key + "/";
}

// Why a recursive cp or rm found nothing under tf://BUCKET/KEY/: the key is an object's (so -r
// was not meant), or nothing is there (a typo).
Status NothingUnder(client::ApiClient& api, const ObjectUrl& url, const char* without_r) {
  const std::string prefix = FolderPrefix(url.key);
  http::ClientRequest head;
  head.method = "HEAD";
  head.target = ObjectTarget(url);
  if (!url.key.empty() && url.key.back() != '/' && api.Exchange(std::move(head)).ok()) {
    return InvalidArgument(url.ToString() + " is an object, not a folder: leave out -r to " +
                           without_r);
  }
  return NotFound("no objects under " + ObjectUrl{url.bucket, prefix}.ToString());
}

// `cp tf://A/X tf://B/Y`: copies made on the server, never through this machine. With -r every
// object under X/ goes under Y/ by its key below X/.
Status CopyObjects(client::ApiClient& api, const ObjectUrl& src, ObjectUrl dst, bool recursive) {
  Transfers done("copy");
  if (!recursive) {
    if (src.key.empty() || src.key.back() == '/') {
      return InvalidArgument(src.ToString() +
                             " names no object (use -r for everything under a "
                             "folder)");
    }
    if (dst.key.empty() || dst.key.back() == '/') dst.key += src.key.substr(src.key.rfind('/') + 1);
    auto bytes = CopyObject(api, src, dst);
    if (!bytes.ok()) return bytes.status().WithContext(src.ToString() + " -> " + dst.ToString());
    done.Done(src.ToString(), dst.ToString(), *bytes);
    done.Summary();
    return OkStatus();
  }
  const std::string prefix = FolderPrefix(src.key);
  TF_ASSIGN_OR_RETURN(std::vector<std::string> keys, ListKeys(api, src.bucket, prefix));
  if (keys.empty()) return NothingUnder(api, src, "copy it");
  const std::string to_prefix = FolderPrefix(dst.key);
  if (src.bucket == dst.bucket && to_prefix.substr(0, prefix.size()) == prefix) {
    return InvalidArgument("cannot copy " + ObjectUrl{src.bucket, prefix}.ToString() +
                           " into itself (" + ObjectUrl{dst.bucket, to_prefix}.ToString() + ")");
  }
  for (const auto& key : keys) {
    ObjectUrl from{src.bucket, key};
    ObjectUrl to{dst.bucket, to_prefix + key.substr(prefix.size())};
    if (to.key.empty()) continue;  // the folder's own marker, copied to a bucket's top
    auto bytes = CopyObject(api, from, to);
    if (!bytes.ok()) return bytes.status().WithContext(from.ToString() + " -> " + to.ToString());
    done.Done(from.ToString(), to.ToString(), *bytes);
  }
  done.Summary();
  return OkStatus();
}

// DownloadFile, with an error that names the object. A link is followed only where the user
// named the destination (a single file), never for a key of a folder copied.
Result<uint64_t> Fetch(client::ApiClient& api, const ObjectUrl& from, const fs::path& to,
                       bool follow_link) {
  Result<uint64_t> got = DownloadFile(api, from, to, follow_link);
  if (!got.ok()) return got.status().WithContext(from.ToString());
  return got;
}

Status Download(client::ApiClient& api, const ObjectUrl& src, const fs::path& dst, bool recursive) {
  Transfers done("download");
  std::error_code ec;
  if (dst.empty()) return InvalidArgument("give a local path to save " + src.ToString() + " to");
  if (recursive) {
    std::string prefix = FolderPrefix(src.key);
    TF_ASSIGN_OR_RETURN(std::vector<std::string> keys, ListKeys(api, src.bucket, prefix));
    if (keys.empty()) return NothingUnder(api, src, "copy it");
    Status skipped;
    auto skip = [&](const std::string& key, const Status& why) {  // never written outside dst
      std::cerr << "skipping " << ObjectUrl{src.bucket, key}.ToString() << ": " << why.message()
                << "\n";
      skipped = why;
    };
    for (const auto& key : keys) {
      if (key.back() == '/') {  // a folder marker (as S3 consoles make): a folder, no file
        std::string_view folder = std::string_view(key).substr(prefix.size());
        if (folder.empty()) continue;  // the marker of the folder copied
        folder.remove_suffix(1);
        auto path = LocalPathFor(dst, folder);
        if (!path.ok()) {
          skip(key, path.status());
          continue;
        }
        if (!fs::create_directories(*path, ec) && ec) {
          return InvalidArgument("cannot create the folder " + path->string() + " for " +
                                 ObjectUrl{src.bucket, key}.ToString() + ": " + ec.message());
        }
        continue;
      }
      auto path = LocalPathFor(dst, std::string_view(key).substr(prefix.size()));
      if (!path.ok()) {
        skip(key, path.status());
        continue;
      }
      fs::create_directories(path->parent_path(), ec);
      ObjectUrl from{src.bucket, key};
      if (ec) {
        return InvalidArgument("cannot create the folder " + path->parent_path().string() +
                               " for " + from.ToString() + ": " + ec.message());
      }
      TF_ASSIGN_OR_RETURN(uint64_t bytes, Fetch(api, from, *path, /*follow_link=*/false));
      done.Done(from.ToString(), path->string(), bytes);
    }
    done.Summary();
    return skipped;
  }
  fs::path path = dst;
  if (fs::is_directory(dst, ec) || dst.string().back() == '/') {
    std::string name = src.key.substr(src.key.rfind('/') + 1);
    if (name.empty() || name == "." || name == "..") {
      return InvalidArgument("give a file name to save " + src.ToString() + " as");
    }
    path = dst / name;
  }
  TF_ASSIGN_OR_RETURN(uint64_t bytes, Fetch(api, src, path, /*follow_link=*/true));
  done.Done(src.ToString(), path.string(), bytes);
  done.Summary();
  return OkStatus();
}

// An object's content on stdout; a write that fails, the last included, is an error.
Status Cat(client::ApiClient& api, const ObjectUrl& url) {
  if (url.key.empty() || url.key.back() == '/') {
    return InvalidArgument(url.ToString() + " names no object (ls lists what is under it)");
  }
  Status s = StreamObject(api, url, [](std::string_view piece) {
    std::cout.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    return std::cout ? OkStatus() : Unavailable("cannot write to stdout");
  });
  std::cout.flush();
  if (s.ok() && !std::cout) s = Unavailable("cannot write to stdout");
  return s.WithContext(url.ToString());
}

Status Copy(const client::Connection& conn, const std::string& from, const std::string& to,
            bool recursive, const std::string& content_type) {
  if (!IsObjectUrl(from) && !IsObjectUrl(to)) {
    return InvalidArgument(
        "cp copies a local path to tf://BUCKET/KEY, back, or between objects; "
        "neither is an object");
  }
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  if (IsObjectUrl(from) && IsObjectUrl(to)) {
    if (!content_type.empty()) {
      return InvalidArgument(
          "--content-type is for uploads: a copy between objects keeps the "
          "source's");
    }
    TF_ASSIGN_OR_RETURN(ObjectUrl src, ParseObjectUrl(from));
    TF_ASSIGN_OR_RETURN(ObjectUrl dst, ParseObjectUrl(to));
    return CopyObjects(api, src, dst, recursive);
  }
  if (IsObjectUrl(to)) {
    TF_ASSIGN_OR_RETURN(ObjectUrl dst, ParseObjectUrl(to));
    if (from == "-") return CopyStdin(api, dst, recursive, content_type);
    return Upload(api, from, dst, recursive, content_type);
  }
  TF_ASSIGN_OR_RETURN(ObjectUrl src, ParseObjectUrl(from));
  if (src.key.empty() && !recursive) return InvalidArgument(from + " names no object");
  if (to == "-") {
    if (recursive) return InvalidArgument("cp -r cannot write several objects to stdout ('-')");
    return Cat(api, src);
  }
  client::RemoveDownloadTempsOnSignal();  // a cp stopped with ^C leaves no hidden partial file
  return Download(api, src, to, recursive);
}

Status List(const client::Connection& conn, const std::string& where, bool recursive) {
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  if (where.empty()) {
    TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", "/v1/buckets"));
    if (conn.json) {
      PrintJson(r);
      return OkStatus();
    }
    Table t({"bucket", "created"});
    for (const auto& b : r["buckets"]) t.Add({Cell(b["name"]), Cell(b["created_at"])});
    t.Print(std::cout);
    return OkStatus();
  }
  TF_ASSIGN_OR_RETURN(ObjectUrl url, ParseObjectUrl(where));
  Json all = {{"objects", Json::array()}, {"common_prefixes", Json::array()}};
  std::string after;
  for (;;) {
    std::string target = "/v1/buckets/" + http::PercentEncode(url.bucket) +
                         "/objects?prefix=" + http::PercentEncode(url.key) +
                         "&start_after=" + http::PercentEncode(after);
    if (!recursive) target += "&delimiter=/";
    TF_ASSIGN_OR_RETURN(Json page, api.Call("GET", target));
    for (auto& o : page["objects"]) all["objects"].push_back(o);
    for (auto& p : page["common_prefixes"]) all["common_prefixes"].push_back(p);
    if (!page.value("truncated", false)) break;
    after = page["next_start_after"].get<std::string>();
  }
  if (conn.json) {
    PrintJson(all);
    return OkStatus();
  }
  Table t({"modified", "size", "key"});
  for (const auto& p : all["common_prefixes"]) t.Add({"", "DIR", Cell(p)});
  for (const auto& o : all["objects"]) {
    t.Add({Cell(o["modified_at"]), FormatBytes(o["size"].get<uint64_t>()), Cell(o["key"])});
  }
  t.Print(std::cout);
  return OkStatus();
}

Status Remove(const client::Connection& conn, const std::string& where, bool recursive) {
  TF_ASSIGN_OR_RETURN(ObjectUrl url, ParseObjectUrl(where));
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  std::vector<std::string> keys = {url.key};
  if (recursive) {
    const std::string prefix = FolderPrefix(url.key);
    TF_ASSIGN_OR_RETURN(keys, ListKeys(api, url.bucket, prefix));
    if (keys.empty()) return NothingUnder(api, url, "remove it");
  } else if (url.key.empty()) {
    return InvalidArgument(where + " names no object (use -r for everything under a folder)");
  }
  for (const auto& key : keys) {
    ObjectUrl object{url.bucket, key};
    TF_RETURN_IF_ERROR(api.Call("DELETE", ObjectTarget(object)).status());
    std::cout << "delete: " << object.ToString() << "\n";
  }
  return OkStatus();
}

}  // namespace

void AddObjectCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* bucket = app.add_subcommand("bucket", "Buckets of objects");
  bucket->require_subcommand(1);
  {
    auto f = std::make_shared<BucketCreateFlags>();
    auto* cmd = bucket->add_subcommand("create", "Create a bucket");
    cmd->add_option("name", f->name, "3-63 of a-z, 0-9, '-' and '.'")->required();
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", "/v1/buckets", {{"name", f->name}}));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << "created bucket " << f->name << "\n";
      return OkStatus();
    });
  }
  {
    auto* cmd = bucket->add_subcommand("list", "List this project's buckets");
    RunStatus(cmd, exit_code, [&conn] { return List(conn, "", false); });
  }
  {
    auto f = std::make_shared<BucketDeleteFlags>();
    auto* cmd = bucket->add_subcommand("delete", "Delete an empty bucket");
    cmd->add_option("name", f->name, "Bucket name")->required();
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_RETURN_IF_ERROR(
          api.Call("DELETE", "/v1/buckets/" + http::PercentEncode(f->name)).status());
      std::cout << "deleted bucket " << f->name << "\n";
      return OkStatus();
    });
  }
  {
    auto f = std::make_shared<CpFlags>();
    auto* cmd = app.add_subcommand(
        "cp", "Copy a file or directory to tf://BUCKET/KEY, back, or between objects");
    cmd->add_option("source", f->from, "Local path, tf://BUCKET/KEY, or - for stdin")->required();
    cmd->add_option("destination", f->to, "tf://BUCKET/KEY, a local path, or - for stdout")
        ->required();
    cmd->add_flag("-r,--recursive", f->recursive, "Copy a directory, or every object under KEY/");
    cmd->add_option("--content-type", f->content_type, "Content type of uploaded objects");
    RunStatus(cmd, exit_code,
              [&conn, f] { return Copy(conn, f->from, f->to, f->recursive, f->content_type); });
  }
  {
    auto f = std::make_shared<LsFlags>();
    auto* cmd = app.add_subcommand("ls", "List buckets, or objects under tf://BUCKET/PREFIX");
    cmd->add_option("url", f->where, "tf://BUCKET[/PREFIX]; none lists buckets");
    cmd->add_flag("-r,--recursive", f->recursive, "Every key under the prefix, not grouped by '/'");
    RunStatus(cmd, exit_code, [&conn, f] { return List(conn, f->where, f->recursive); });
  }
  {
    auto f = std::make_shared<RmFlags>();
    auto* cmd = app.add_subcommand("rm", "Delete an object, or every object under a folder");
    cmd->add_option("url", f->where, "tf://BUCKET/KEY")->required();
    cmd->add_flag("-r,--recursive", f->recursive,
                  "Delete every object under KEY/ (tf://b/data: data/x, never data2/x)");
    RunStatus(cmd, exit_code, [&conn, f] { return Remove(conn, f->where, f->recursive); });
  }
  {
    auto f = std::make_shared<CatFlags>();
    auto* cmd = app.add_subcommand("cat", "Write an object's content to stdout");
    cmd->add_option("url", f->where, "tf://BUCKET/KEY")->required();
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(ObjectUrl url, ParseObjectUrl(f->where));
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      return Cat(api, url);
    });
  }
}

}  // namespace tf::cli
