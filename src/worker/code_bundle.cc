#include "worker/code_bundle.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>

#include "base/crypto.h"
#include "worker/process_group.h"

namespace tf::worker {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxTarMessageBytes = 2000;
constexpr int kLargestNamed = 5;

struct PackedFile {
  std::string path;  // relative, with '/'
  uint64_t size = 0;
};

struct Walk {
  std::set<std::string> exclude;
  std::vector<std::string> members;  // in the order tar gets them: a directory before its content
  std::vector<PackedFile> files;
  uint64_t bytes = 0;
};

std::string Normalize(std::string path) {
  while (path.rfind("./", 0) == 0) path.erase(0, 2);
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

Status WalkDir(const fs::path& root, const std::string& rel, Walk& walk) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(rel.empty() ? root : root / rel, ec)) {
    names.push_back(e.path().filename().string());
  }
  if (ec) return InvalidArgument("cannot read " + (root / rel).string() + ": " + ec.message());
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    if (name == ".git" || name == "__pycache__") continue;
    std::string path = rel.empty() ? name : rel + "/" + name;
    if (walk.exclude.count(path)) continue;
    struct stat st {};
    if (::lstat((root / path).c_str(), &st) != 0) continue;  // gone meanwhile
    if (S_ISDIR(st.st_mode)) {
      walk.members.push_back(path);
      TF_RETURN_IF_ERROR(WalkDir(root, path, walk));
    } else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
      walk.members.push_back(path);
      walk.files.push_back({path, static_cast<uint64_t>(st.st_size)});
      walk.bytes += static_cast<uint64_t>(st.st_size);
    }
  }
  return OkStatus();
}

std::string Mib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

Status TooLarge(const fs::path& dir, Walk& walk, uint64_t limit) {
  std::sort(walk.files.begin(), walk.files.end(),
            [](const PackedFile& a, const PackedFile& b) { return a.size > b.size; });
  std::string largest;
  for (int i = 0; i < kLargestNamed && i < static_cast<int>(walk.files.size()); ++i) {
    largest += (i ? ", " : "") + walk.files[i].path + " (" + Mib(walk.files[i].size) + ")";
  }
  return ResourceExhausted("the code in " + dir.string() + " is " + Mib(walk.bytes) +
                           ", over the " + Mib(limit) + " limit; the largest files: " + largest +
                           ". Leave data, checkpoints and outputs out of the code directory (or "
                           "exclude them) and read them from objects instead");
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  if (text.size() > kMaxTarMessageBytes) text = text.substr(0, kMaxTarMessageBytes) + "...";
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// Runs tar with `args`; kInvalidArgument with its messages unless it exits 0.
Status RunTar(const std::vector<std::string>& args, const std::string& what) {
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  fs::path log = tmp / ("tensorfleet-tar-" + RandomHex(6) + ".log");
  ProcessSpec spec;
  spec.argv = {"tar"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"LC_ALL", "C"}};
  spec.working_dir = "/";
  spec.log_file = log;
  auto tar = ProcessGroup::Start(spec);
  if (!tar.ok()) return tar.status().WithContext(what);
  auto exit = (*tar)->Wait();
  std::string messages = ReadText(log);
  fs::remove(log, ec);
  if (!exit.ok()) return exit.status().WithContext(what);
  if (!exit->success()) {
    return InvalidArgument(what + ": tar ended with " + exit->ToString() +
                           (messages.empty() ? "" : ": " + messages));
  }
  return OkStatus();
}

}  // namespace

Result<PackStats> Pack(const fs::path& dir, const fs::path& out, const PackOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return InvalidArgument(dir.string() + " is not a directory");
  Walk walk;
  for (const auto& e : options.exclude) walk.exclude.insert(Normalize(e));
  TF_RETURN_IF_ERROR(WalkDir(dir, "", walk));
  if (walk.bytes > options.max_bytes) return TooLarge(dir, walk, options.max_bytes);

  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  const std::string stem = "." + out.filename().string() + "." + RandomHex(4);
  const fs::path list = parent / (stem + ".list");
  const fs::path temp = parent / (stem + ".tmp");
  {
    std::ofstream f(list, std::ios::binary);
    for (const auto& m : walk.members) f << m << '\0';
    if (!f.flush()) return InvalidArgument("cannot write " + list.string());
  }
  Status s = RunTar({"--create", "--gzip", "--file=" + fs::absolute(temp).string(),
                     "--directory=" + fs::absolute(dir).string(), "--no-recursion", "--null",
                     "--verbatim-files-from", "--files-from=" + fs::absolute(list).string(),
                     "--owner=0", "--group=0", "--numeric-owner"},
                    "cannot pack " + dir.string());
  fs::remove(list, ec);
  if (s.ok()) {
    fs::rename(temp, out, ec);
    if (ec) s = InvalidArgument("cannot create " + out.string() + ": " + ec.message());
  }
  if (!s.ok()) {
    fs::remove(temp, ec);
    return s;
  }
  return PackStats{static_cast<int>(walk.files.size()), walk.bytes};
}

Status Unpack(const fs::path& bundle, const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(bundle, ec)) return InvalidArgument(bundle.string() + " is not a file");
  fs::create_directories(dir, ec);
  if (ec) return InvalidArgument("cannot create " + dir.string() + ": " + ec.message());
  return RunTar({"--extract", "--gzip", "--file=" + fs::absolute(bundle).string(),
                 "--directory=" + fs::absolute(dir).string(), "--no-same-owner",
                 "--no-same-permissions", "--no-overwrite-dir"},
                "cannot unpack " + bundle.string());
}

}  // namespace tf::worker
