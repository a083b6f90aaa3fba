#include "worker/cgroups.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace tf::worker {
namespace {

namespace fs = std::filesystem;

constexpr const char* kControllers[] = {"cpu", "memory", "pids"};
constexpr int64_t kCpuPeriodUs = 100'000;
constexpr const char* kWorkerLeaf = "tensorfleet-worker";

std::string ReadCgroupFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> SplitOn(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// One write, as the kernel wants a cgroup file written.
Status WriteCgroupFile(const fs::path& p, const std::string& text) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Unavailable("cannot open " + p.string() + ": " + std::strerror(errno));
  ssize_t n = ::write(fd, text.data(), text.size());
  int error = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    return Unavailable("cannot write '" + text + "' to " + p.string() + ": " +
                       std::strerror(n < 0 ? error : EIO));
  }
  return OkStatus();
}

Status MakeDirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Unavailable("cannot make " + dir.string() + ": " + ec.message());
  return OkStatus();
}

struct Mount {
  fs::path point;  // under `root`
  std::string root_in_hierarchy;
};

// This process's group in one hierarchy, as a directory under `root`.
fs::path OwnDir(const fs::path& root, const Mount& m, const std::string& own) {
  std::string rel = own;
  if (m.root_in_hierarchy != "/" && rel.rfind(m.root_in_hierarchy, 0) == 0) {
    rel = rel.substr(m.root_in_hierarchy.size());
  }
  return m.point / fs::path(rel).relative_path();
}

// The "oom_kill N" line of memory.events (v2) or memory.oom_control (v1).
int64_t OomKillLine(const fs::path& file) {
  std::stringstream in(ReadCgroupFile(file));
  std::string key;
  int64_t value = 0;
  while (in >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return 0;
}

}  // namespace

std::vector<fs::path> RankCgroup::ProcsFiles() const {
  std::vector<fs::path> out;
  for (const fs::path& dir : dirs_) out.push_back(dir / "cgroup.procs");
  return out;
}

int64_t RankCgroup::OomKills() const {
  if (memory_dir_.empty()) return 0;
  return std::max(OomKillLine(memory_dir_ / "memory.events"),
                  OomKillLine(memory_dir_ / "memory.oom_control"));
}

Status RankCgroup::KillAndRemove() const {
  std::vector<fs::path> left = dirs_;
  // Processes take a moment to die and leave the group: up to about 5 s in all.
  for (int round = 0; round < 500 && !left.empty(); ++round) {
    if (round > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::vector<fs::path> still;
    for (const fs::path& dir : left) {
      std::error_code ec;
      if (!fs::exists(dir, ec)) continue;
      if (fs::exists(dir / "cgroup.kill", ec)) (void)WriteCgroupFile(dir / "cgroup.kill", "1");
      for (const std::string& line : SplitOn(ReadCgroupFile(dir / "cgroup.procs"), '\n')) {
        pid_t pid = static_cast<pid_t>(std::strtol(line.c_str(), nullptr, 10));
        if (pid > 0) ::kill(pid, SIGKILL);
      }
      if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) continue;
      if (errno != EBUSY) {
        return Unavailable("cannot remove " + dir.string() + ": " + std::strerror(errno));
      }
      still.push_back(dir);
    }
    left = std::move(still);
  }
  if (!left.empty()) return Unavailable("processes of " + left[0].string() + " would not end");
  return OkStatus();
}

Result<Cgroups> Cgroups::Setup(const fs::path& root, const std::string& node_id) {
  // Where each hierarchy is mounted, and this process's group in it.
  std::map<std::string, Mount> v1;  // controller -> its hierarchy
  std::optional<Mount> unified;
  for (const std::string& line : SplitOn(ReadCgroupFile(root / "proc/self/mountinfo"), '\n')) {
    size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::vector<std::string> left = SplitOn(line.substr(0, dash), ' ');
    std::vector<std::string> right = SplitOn(line.substr(dash + 3), ' ');
    if (left.size() < 5 || right.size() < 3) continue;
    Mount m{root / fs::path(left[4]).relative_path(), left[3]};
    if (right[0] == "cgroup2") unified = m;
    if (right[0] != "cgroup") continue;
    for (const std::string& option : SplitOn(right[2], ',')) {
      for (const char* c : kControllers) {
        if (option == c) v1[c] = m;
      }
    }
  }
  std::map<std::string, std::string> own;  // controller ("" for v2) -> path
  for (const std::string& line : SplitOn(ReadCgroupFile(root / "proc/self/cgroup"), '\n')) {
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string path = line.substr(second + 1);
    for (const std::string& c : SplitOn(line.substr(first + 1, second - first - 1), ',')) {
      own[c] = path;
    }
    if (second == first + 1) own[""] = path;
  }

  Cgroups out;
  std::vector<std::string> why;
  // v2 first: the controllers this process's group can hand to groups below it.
  if (unified && own.count("")) {
    fs::path own_dir = OwnDir(root, *unified, own[""]);
    if (own_dir.filename() == kWorkerLeaf) own_dir = own_dir.parent_path();
    std::set<std::string> offered;
    for (const std::string& c : SplitOn(ReadCgroupFile(own_dir / "cgroup.controllers"), ' ')) {
      offered.insert(c.substr(0, c.find('\n')));
    }
    std::vector<std::string> wanted;
    for (const char* c : kControllers) {
      if (offered.count(c) && !v1.count(c)) wanted.push_back(c);
    }
    if (!wanted.empty()) {
      fs::path leaf = own_dir / kWorkerLeaf;
      fs::path node_dir = own_dir / ("tensorfleet-" + node_id);
      Status s = MakeDirs(leaf);
      if (s.ok()) s = WriteCgroupFile(leaf / "cgroup.procs", std::to_string(::getpid()));
      if (s.ok()) s = MakeDirs(node_dir);
      for (const std::string& c : wanted) {
        if (s.ok()) s = WriteCgroupFile(own_dir / "cgroup.subtree_control", "+" + c);
        if (s.ok()) s = WriteCgroupFile(node_dir / "cgroup.subtree_control", "+" + c);
        if (s.ok()) out.places_[c] = {node_dir, true};
      }
      if (!s.ok()) why.push_back(s.message());
    }
  }
  for (const char* c : kControllers) {
    if (out.places_.count(c) || !v1.count(c) || !own.count(c)) continue;
    fs::path node_dir = OwnDir(root, v1[c], own[c]) / "tensorfleet" / node_id;
    Status s = MakeDirs(node_dir);
    if (s.ok()) {
      out.places_[c] = {node_dir, false};
    } else {
      why.push_back(s.message());
    }
  }
  if (out.places_.empty()) {
    if (why.empty()) why.push_back("no cpu, memory or pids controller is mounted");
    return Unavailable(why[0]);
  }
  // What a worker of this node left: its ranks were killed with it, anything else goes now.
  std::set<fs::path> dirs;
  for (const auto& [c, place] : out.places_) dirs.insert(place.dir);
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (!entry.is_directory(ec)) continue;
      Status cleared = RankCgroup({entry.path()}, {}).KillAndRemove();
      if (!cleared.ok()) return cleared;
    }
  }
  return out;
}

Result<RankCgroup> Cgroups::Create(const std::string& name, const CgroupLimits& limits) const {
  std::set<fs::path> made;
  fs::path memory_dir;
  auto fail = [&](const Status& s) -> Status {
    std::vector<fs::path> dirs(made.begin(), made.end());
    (void)RankCgroup(dirs, {}).KillAndRemove();
    return s.WithContext("making the cgroup of " + name);
  };
  for (const auto& [controller, place] : places_) {
    fs::path dir = place.dir / name;
    if (!made.count(dir)) {
      Status leftover = RankCgroup({dir}, {}).KillAndRemove();
      if (!leftover.ok()) return fail(leftover);
      if (::mkdir(dir.c_str(), 0755) != 0) {
        return fail(Unavailable("cannot make " + dir.string() + ": " + std::strerror(errno)));
      }
      made.insert(dir);
    }
    Status s = OkStatus();
    if (controller == "cpu" && limits.cpus > 0) {
      auto quota = static_cast<int64_t>(std::ceil(limits.cpus * kCpuPeriodUs));
      if (place.v2) {
        s = WriteCgroupFile(dir / "cpu.max",
                            std::to_string(quota) + " " + std::to_string(kCpuPeriodUs));
      } else {
        s = WriteCgroupFile(dir / "cpu.cfs_period_us", std::to_string(kCpuPeriodUs));
        if (s.ok()) s = WriteCgroupFile(dir / "cpu.cfs_quota_us", std::to_string(quota));
      }
    } else if (controller == "memory" && limits.memory_bytes > 0) {
      memory_dir = dir;
      std::string bytes = std::to_string(limits.memory_bytes);
      std::error_code ec;
      if (place.v2) {
        s = WriteCgroupFile(dir / "memory.max", bytes);
        // No swap beyond the limit where the kernel has swap accounting.
        if (s.ok() && fs::exists(dir / "memory.swap.max", ec)) {
          s = WriteCgroupFile(dir / "memory.swap.max", "0");
        }
      } else {
        s = WriteCgroupFile(dir / "memory.limit_in_bytes", bytes);
        if (s.ok() && fs::exists(dir / "memory.memsw.limit_in_bytes", ec)) {
          s = WriteCgroupFile(dir / "memory.memsw.limit_in_bytes", bytes);
        }
      }
    } else if (controller == "pids" && limits.pids > 0) {
      s = WriteCgroupFile(dir / "pids.max", std::to_string(limits.pids));
    }
    if (!s.ok()) return fail(s);
  }
  return RankCgroup(std::vector<fs::path>(made.begin(), made.end()), memory_dir);
}

void Cgroups::Release() const {
  for (const auto& [controller, place] : places_) ::rmdir(place.dir.c_str());
}

std::string Cgroups::Describe() const {
  std::string v1, v2;
  for (const auto& [controller, place] : places_) {
    std::string& list = place.v2 ? v2 : v1;
    list += (list.empty() ? "" : ", ") + controller;
  }
  std::string out;
  if (!v2.empty()) out = "cgroup v2 (" + v2 + ")";
  if (!v1.empty()) out += (out.empty() ? "" : " and ") + std::string("cgroup v1 (") + v1 + ")";
  return out;
}

}  // namespace tf::worker
