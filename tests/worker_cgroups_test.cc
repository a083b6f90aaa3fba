// A rank's cgroup (worker/cgroups.h): where a worker makes its groups, read from a /proc and a
// /sys laid out in a directory as the kernel lays them out (v1 and v2), and, where the tests
// run as root on a machine that lets them, for real: a process over its memory limit is killed
// by the kernel and counted, one over its pids limit cannot fork, and a process that left its
// session still ends with its group.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "child_process.h"
#include "file_test_util.h"
#include "store_test_env.h"
#include "worker/cgroups.h"
#include "worker/process_group.h"

namespace tf::worker {
namespace {

namespace fs = std::filesystem;
using tf::testing::ReadFile;
using tf::testing::TempDir;

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

constexpr const char* kV1Mounts =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

TEST(CgroupsLayoutTest, V1GroupsGoUnderTheWorkersOwnGroupInEachControllersHierarchy) {
  TempDir root;
  Write(root.path() / "proc/self/mountinfo", kV1Mounts);
  Write(root.path() / "proc/self/cgroup",
        "8:pids:/ci/box\n4:memory:/ci/box\n1:cpu,cpuacct:/ci/box\n0::/\n");
  auto cgroups = Cgroups::Setup(root.path(), "node_1");
  ASSERT_TRUE(cgroups.ok()) << cgroups.status().ToString();
  EXPECT_EQ(cgroups->Describe(), "cgroup v1 (cpu, memory, pids)");

  auto group = cgroups->Create("job_1-1-0", {.cpus = 1.5, .memory_bytes = 64 << 20, .pids = 100});
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  const fs::path cpu =
      root.path() / "sys/fs/cgroup/cpu,cpuacct/ci/box/tensorfleet/node_1/job_1-1-0";
  const fs::path memory = root.path() / "sys/fs/cgroup/memory/ci/box/tensorfleet/node_1/job_1-1-0";
  const fs::path pids = root.path() / "sys/fs/cgroup/pids/ci/box/tensorfleet/node_1/job_1-1-0";
  EXPECT_EQ(ReadFile(cpu / "cpu.cfs_period_us"), "100000");
  EXPECT_EQ(ReadFile(cpu / "cpu.cfs_quota_us"), "150000");
  EXPECT_EQ(ReadFile(memory / "memory.limit_in_bytes"), std::to_string(64 << 20));
  EXPECT_EQ(ReadFile(pids / "pids.max"), "100");
  EXPECT_EQ(group->ProcsFiles(),
            (std::vector<fs::path>{cpu / "cgroup.procs", memory / "cgroup.procs",
                                   pids / "cgroup.procs"}));
  EXPECT_EQ(group->OomKills(), 0);
  Write(memory / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  EXPECT_EQ(group->OomKills(), 2);
}

TEST(CgroupsLayoutTest, V2MovesTheWorkerIntoALeafAndGivesTheControllersToTheRanksGroups) {
  TempDir root;
  Write(root.path() / "proc/self/mountinfo",
        "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
  Write(root.path() / "proc/self/cgroup", "0::/system.slice/tensorfleet.service\n");
  const fs::path own = root.path() / "sys/fs/cgroup/system.slice/tensorfleet.service";
  Write(own / "cgroup.controllers", "cpuset cpu io memory pids\n");
  auto cgroups = Cgroups::Setup(root.path(), "node_2");
  ASSERT_TRUE(cgroups.ok()) << cgroups.status().ToString();
  EXPECT_EQ(cgroups->Describe(), "cgroup v2 (cpu, memory, pids)");
  EXPECT_EQ(ReadFile(own / "tensorfleet-worker/cgroup.procs"), std::to_string(::getpid()));
  EXPECT_TRUE(fs::is_directory(own / "tensorfleet-node_2"));

  auto group = cgroups->Create("job_2-1-0", {.cpus = 2, .memory_bytes = 1 << 30, .pids = 50});
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  const fs::path dir = own / "tensorfleet-node_2/job_2-1-0";
  EXPECT_EQ(ReadFile(dir / "cpu.max"), "200000 100000");
  EXPECT_EQ(ReadFile(dir / "memory.max"), std::to_string(1 << 30));
  EXPECT_EQ(ReadFile(dir / "pids.max"), "50");
  EXPECT_EQ(group->ProcsFiles(), (std::vector<fs::path>{dir / "cgroup.procs"}));
  Write(dir / "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  EXPECT_EQ(group->OomKills(), 1);

  // A restarted worker finds itself in the leaf and starts from the group above it.
  TempDir again;
  Write(again.path() / "proc/self/mountinfo",
        "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
  Write(again.path() / "proc/self/cgroup", "0::/svc/tensorfleet-worker\n");
  Write(again.path() / "sys/fs/cgroup/svc/cgroup.controllers", "memory\n");
  auto restarted = Cgroups::Setup(again.path(), "node_2");
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();
  EXPECT_EQ(restarted->Describe(), "cgroup v2 (memory)");
  EXPECT_TRUE(fs::is_directory(again.path() / "sys/fs/cgroup/svc/tensorfleet-node_2"));
  EXPECT_FALSE(
      fs::exists(again.path() / "sys/fs/cgroup/svc/tensorfleet-worker/tensorfleet-worker"));
}

TEST(CgroupsLayoutTest, WithoutControllersItSaysWhy) {
  TempDir root;
  Write(root.path() / "proc/self/mountinfo",
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n");
  Write(root.path() / "proc/self/cgroup", "0::/\n");
  auto cgroups = Cgroups::Setup(root.path(), "node_3");
  ASSERT_FALSE(cgroups.ok());
  EXPECT_EQ(cgroups.status().message(), "no cpu, memory or pids controller is mounted");
}

// The real thing: root, and a kernel that lets this process make groups.
class RealCgroupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "making cgroups needs root";
    auto made = Cgroups::Setup("/", "node_test_" + std::to_string(::getpid()));
    if (!made.ok()) GTEST_SKIP() << "no cgroups here: " << made.status().ToString();
    cgroups_ = std::move(made).value();
  }
  void TearDown() override {
    if (cgroups_) cgroups_->Release();
  }

  bool Has(const std::string& controller) const {
    return cgroups_->Describe().find(controller) != std::string::npos;
  }

  // Runs `command` in `group` and returns how it ended.
  ExitStatus Run(const RankCgroup& group, const std::string& command) {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", command};
    spec.env = {{"PATH", "/usr/bin:/bin"}};
    spec.working_dir = dir_.path();
    spec.log_file = dir_.path() / "log";
    spec.cgroup_procs = group.ProcsFiles();
    auto started = ProcessGroup::Start(spec);
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (!started.ok()) return {};
    auto ended = (*started)->Wait();
    EXPECT_TRUE(ended.ok()) << ended.status().ToString();
    return ended.ok() ? *ended : ExitStatus{};
  }

  TempDir dir_;
  std::optional<Cgroups> cgroups_;
};

TEST_F(RealCgroupsTest, AProcessOverItsMemoryLimitIsKilledByTheKernelAndCounted) {
  if (!Has("memory")) GTEST_SKIP() << "no memory controller: " << cgroups_->Describe();
  auto group = cgroups_->Create("hog", {.memory_bytes = 64 << 20});
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  ExitStatus ended = Run(*group, "exec /usr/bin/python3 -c 'b = bytearray(512 << 20)'");
  EXPECT_EQ(ended.signal, SIGKILL) << ended.ToString() << ReadFile(dir_.path() / "log");
  EXPECT_EQ(group->OomKills(), 1);
  EXPECT_TRUE(group->KillAndRemove().ok());
  for (const fs::path& dir : group->dirs()) EXPECT_FALSE(fs::exists(dir)) << dir;
}

TEST_F(RealCgroupsTest, AProcessOverItsPidsLimitCannotFork) {
  if (!Has("pids")) GTEST_SKIP() << "no pids controller: " << cgroups_->Describe();
  auto group = cgroups_->Create("forker", {.pids = 8});
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  ExitStatus ended = Run(*group, "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 30 & done; wait");
  EXPECT_FALSE(ended.success());
  EXPECT_NE(ReadFile(dir_.path() / "log").find("fork"), std::string::npos)
      << ReadFile(dir_.path() / "log");
  EXPECT_TRUE(group->KillAndRemove().ok());
}

TEST_F(RealCgroupsTest, AProcessThatLeftItsSessionStillEndsWithItsGroup) {
  auto group = cgroups_->Create("escaper", {.pids = 100});
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  const fs::path pid_file = dir_.path() / "escaped.pid";
  ExitStatus ended =
      Run(*group, "setsid sleep 600 < /dev/null > /dev/null 2>&1 & echo $! > " + pid_file.string());
  ASSERT_TRUE(ended.success()) << ended.ToString();
  pid_t escaped = std::stoi(ReadFile(pid_file));
  ASSERT_EQ(::kill(escaped, 0), 0) << "the escaped process should still run";
  ASSERT_TRUE(group->KillAndRemove().ok());
  EXPECT_TRUE(tf::testing::WaitForProcessExit(escaped, std::chrono::seconds(5)));
}

}  // namespace
}  // namespace tf::worker
