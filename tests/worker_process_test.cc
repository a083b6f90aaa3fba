// Workloads as supervised process groups (worker/process_group.h) and what a restarted worker
// does with the groups its predecessor left (worker/local_state.h): real short-lived children
// (sh, sleep, env, ls), waited on by condition, never by sleeping.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "child_process.h"
#include "eventually.h"
#include "file_test_util.h"
#include "store_test_env.h"
#include "worker/job_user.h"
#include "worker/local_state.h"
#include "worker/proc_stat.h"
#include "worker/process_group.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using worker::ExitStatus;
using worker::LocalState;
using worker::ProcessGroup;
using worker::ProcessSpec;

// How long to wait for these children, looking often: they are quick.
constexpr auto kPatience = 20s;
constexpr auto kLookEvery = 5ms;

// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
bool Ended(pid_t pid) {
  auto st = worker::ReadProcStat(pid);
  return st.ok() && (!st->has_value() || (*st)->state == 'Z');
}

// Waits for a process that is not our child to end, through a pidfd.
bool WaitEnded(pid_t pid) { return WaitForProcessExit(pid, kPatience); }

class ProcessGroupTest : public ::testing::Test {
 protected:
  ProcessSpec Spec(std::vector<std::string> argv) {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.env = {{"PATH", "/usr/bin:/bin"}};
    spec.working_dir = dir_.path();
    spec.log_file = dir_.path() / "out.log";
    return spec;
  }
  std::unique_ptr<ProcessGroup> Start(const ProcessSpec& spec) {
    auto group = ProcessGroup::Start(spec);
    EXPECT_TRUE(group.ok()) << group.status().ToString();
    return group.ok() ? std::move(group).value() : nullptr;
  }
  std::string Log() { return ReadFile(dir_.path() / "out.log"); }

  TempDir dir_;
};

TEST_F(ProcessGroupTest, RunsWithExactlyItsEnvironmentAndAppendsBothStreamsToTheLog) {
  std::ofstream(dir_.path() / "out.log") << "earlier attempt\n";
  auto spec = Spec({"env"});
  spec.env["TENSORFLEET_JOB_ID"] = "job_1";
  spec.env["CUDA_VISIBLE_DEVICES"] = "2,3";
  auto env = Start(spec);
  ASSERT_TRUE(env);
  auto exit = env->Wait();
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_TRUE(exit->success()) << exit->ToString();
  // Nothing of the test's own environment (HOME, USER, ...) reaches it.
  EXPECT_EQ(Log(),
            "earlier attempt\nCUDA_VISIBLE_DEVICES=2,3\nPATH=/usr/bin:/bin\n"
            "TENSORFLEET_JOB_ID=job_1\n");

  auto both = Start(Spec({"sh", "-c", "echo out; echo err >&2; pwd"}));
  ASSERT_TRUE(both);
  ASSERT_TRUE(both->Wait().ok());
  EXPECT_EQ(Log(),
            "earlier attempt\nCUDA_VISIBLE_DEVICES=2,3\nPATH=/usr/bin:/bin\n"
            "TENSORFLEET_JOB_ID=job_1\nout\nerr\n" +
                fs::canonical(dir_.path()).string() + "\n");
}

TEST_F(ProcessGroupTest, RunsAsTheUserItIsGivenWhileItsWatcherStaysTheWorkers) {
  if (::geteuid() != 0) GTEST_SKIP() << "changing user needs root";
  const worker::JobUser user = worker::JobUserFor("job_1");
  EXPECT_EQ(worker::JobUserFor("job_1").uid, user.uid);  // the same on every node
  EXPECT_GE(user.uid, worker::kFirstJobUid);
  EXPECT_NE(worker::JobUserFor("job_2").uid, user.uid);
  auto spec =
      Spec({"sh", "-c",
            "echo $(id -u) $(id -g) $(id -G); ls /root > /dev/null 2>&1 || echo no-root-home"});
  spec.run_as = worker::RunAs{user.uid, user.gid, {worker::kJobsGid}};
  ASSERT_EQ(::chown(dir_.path().c_str(), user.uid, user.gid), 0);
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0700), 0);
  auto group = Start(spec);
  ASSERT_TRUE(group);
  EXPECT_EQ(group->Wait()->exit_code, 0) << Log();
  const std::string uid = std::to_string(user.uid), jobs = std::to_string(worker::kJobsGid);
  EXPECT_EQ(Log(), uid + " " + uid + " " + uid + " " + jobs + "\nno-root-home\n");

  // A working directory the user may not enter: it says so and exits 127.
  ASSERT_EQ(::chown(dir_.path().c_str(), 0, 0), 0);
  fs::create_directories(dir_.path() / "private");
  ASSERT_EQ(::chmod((dir_.path() / "private").c_str(), 0700), 0);
  spec.working_dir = dir_.path() / "private";
  auto refused = Start(spec);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->Wait()->exit_code, worker::kExitNotFound);
  EXPECT_NE(Log().find("cannot enter the working directory"), std::string::npos) << Log();
}

TEST_F(ProcessGroupTest, LeadsItsOwnSessionAndRecordsItsStartTime) {
  auto group = Start(Spec({"sh", "-c", "cat /proc/$$/stat; read -r line"}));
  ASSERT_TRUE(group);
  auto now = worker::ReadProcStat(group->pid());
  ASSERT_TRUE(now.ok() && now->has_value());
  EXPECT_EQ((*now)->start_time, group->start_time());
  EXPECT_EQ((*now)->pgrp, group->pid());
  EXPECT_EQ((*now)->session, group->pid());
  // stdin is /dev/null: `read` ends at once and so does the shell.
  auto exit = group->Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 1);  // read at end of input
  auto logged = worker::ParseProcStat(Log());
  ASSERT_TRUE(logged.ok()) << Log();
  EXPECT_EQ(logged->session, group->pid());
}

TEST_F(ProcessGroupTest, ReportsExitCodesAndSignals) {
  auto three = Start(Spec({"sh", "-c", "exit 3"}));
  auto killed = Start(Spec({"sh", "-c", "kill -9 $$"}));
  ASSERT_TRUE(three && killed);
  EXPECT_EQ(*three->Wait(), (ExitStatus{3, 0}));
  auto k = killed->Wait();
  EXPECT_EQ(*k, (ExitStatus{-1, SIGKILL}));
  EXPECT_EQ(k->ToString(), "killed by SIGKILL");
  EXPECT_EQ(three->Wait()->ToString(), "exit code 3");  // asked again: the same answer
}

TEST_F(ProcessGroupTest, CommandsThatCannotRunExitLikeAShellWithTheReasonInTheLog) {
  auto missing = Start(Spec({"no-such-command-tf", "x"}));
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->Wait()->exit_code, worker::kExitNotFound);
  EXPECT_NE(Log().find("tensorfleet: cannot run 'no-such-command-tf': command not found"),
            std::string::npos)
      << Log();

  std::ofstream(dir_.path() / "script.sh") << "echo hi\n";
  fs::permissions(dir_.path() / "script.sh", fs::perms::owner_read | fs::perms::owner_write);
  auto denied = Start(Spec({"./script.sh"}));
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->Wait()->exit_code, worker::kExitNotExecutable);
  EXPECT_NE(Log().find("cannot run './script.sh': permission denied"), std::string::npos) << Log();

  // What the spec gets wrong is refused before anything starts.
  EXPECT_EQ(ProcessGroup::Start(Spec({})).status().code(), StatusCode::kInvalidArgument);
  auto no_dir = Spec({"true"});
  no_dir.working_dir = dir_.path() / "missing";
  EXPECT_EQ(ProcessGroup::Start(no_dir).status().code(), StatusCode::kInvalidArgument);
  auto bad_env = Spec({"true"});
  bad_env.env["A=B"] = "x";
  EXPECT_EQ(ProcessGroup::Start(bad_env).status().code(), StatusCode::kInvalidArgument);
  auto bad_log = Spec({"true"});
  bad_log.log_file = dir_.path() / "missing" / "out.log";
  EXPECT_EQ(ProcessGroup::Start(bad_log).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ProcessGroupTest, LeaksNoDescriptorIntoTheChild) {
  int leaked = open("/dev/null", O_RDONLY);  // no O_CLOEXEC, as careless code elsewhere might
  ASSERT_GE(leaked, 3);
  auto ls = Start(Spec({"ls", "/proc/self/fd"}));
  close(leaked);
  ASSERT_TRUE(ls);
  ASSERT_TRUE(ls->Wait()->success());
  std::istringstream lines(Log());
  std::set<std::string> fds;
  for (std::string line; std::getline(lines, line);) fds.insert(line);
  // stdin, stdout, stderr, and the directory ls is reading.
  EXPECT_EQ(fds, (std::set<std::string>{"0", "1", "2", "3"})) << Log();
}

TEST_F(ProcessGroupTest, TryWaitDoesNotBlockAndTerminateEndsAGroupThatStops) {
  auto sleeper = Start(Spec({"sleep", "1000"}));
  ASSERT_TRUE(sleeper);
  auto running = sleeper->TryWait();
  ASSERT_TRUE(running.ok());
  EXPECT_FALSE(running->has_value());
  auto none = sleeper->WaitFor(1ms);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto exit = sleeper->Terminate(60s);
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(*exit, (ExitStatus{-1, SIGTERM}));
  EXPECT_TRUE(sleeper->Signal(SIGTERM).ok());  // reaped: nothing to signal, not an error
}

TEST_F(ProcessGroupTest, TerminateSendsSigkillToAGroupIgnoringSigterm) {
  auto stubborn = Start(Spec({"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"}));
  ASSERT_TRUE(stubborn);
  ASSERT_TRUE(Eventually([&] { return Log() == "ready\n"; }, kPatience, kLookEvery));
  auto exit = stubborn->Terminate(50ms);
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(*exit, (ExitStatus{-1, SIGKILL}));
}

TEST_F(ProcessGroupTest, SignalsReachEveryProcessOfTheGroup) {
  auto parent = Start(Spec({"sh", "-c", "sleep 1000 & echo $! > child.pid; wait"}));
  ASSERT_TRUE(parent);
  ASSERT_TRUE(Eventually([&] { return ReadFile(dir_.path() / "child.pid").ends_with("\n"); },
                         kPatience, kLookEvery));
  pid_t child = std::stoi(ReadFile(dir_.path() / "child.pid"));
  ASSERT_FALSE(Ended(child));
  ASSERT_TRUE(parent->Signal(SIGTERM).ok());
  EXPECT_TRUE(WaitEnded(child));
  auto exit = parent->Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_FALSE(exit->success());
}

TEST_F(ProcessGroupTest, WhatALeaderLeftRunningIsKilledWhenItEnds) {
  auto parent = Start(Spec({"sh", "-c", "sleep 1000 & echo $! > child.pid"}));
  ASSERT_TRUE(parent);
  auto exit = parent->Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_TRUE(exit->success());
  pid_t child = std::stoi(ReadFile(dir_.path() / "child.pid"));
  EXPECT_TRUE(WaitEnded(child));
}

TEST_F(ProcessGroupTest, DestroyingARunningGroupKillsAndReapsIt) {
  pid_t pid;
  {
    auto sleeper = Start(Spec({"sleep", "1000"}));
    ASSERT_TRUE(sleeper);
    pid = sleeper->pid();
  }
  // Reaped, not left a zombie: it is no longer a child of ours.
  siginfo_t info{};
  EXPECT_NE(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG), 0);
  EXPECT_EQ(errno, ECHILD);
}

TEST(ProcStatTest, ReadsFieldsAfterACommandNameWithSpacesAndParentheses) {
  auto st = worker::ParseProcStat(
      "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 "
      "200 18446744073709551615\n");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->pid, 4242);
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->pgrp, 4242);
  EXPECT_EQ(st->session, 4242);
  EXPECT_EQ(st->start_time, 987654u);
  for (const char* bad : {"", "4242", "4242 (x) S 1 2",
                          "x (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 "
                          "14 15 16 17 18 19 20"}) {
    EXPECT_EQ(worker::ParseProcStat(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  auto self = worker::ReadProcStat(getpid());
  ASSERT_TRUE(self.ok() && self->has_value());
  EXPECT_EQ((*self)->pid, getpid());
}

// ---- The record on disk, and orphans ----

class LocalStateTest : public ProcessGroupTest {
 protected:
  fs::path StatePath() { return dir_.path() / "worker-state.json"; }
  LocalState::Entry EntryFor(const ProcessGroup& g, const std::string& job, int local_rank = 0) {
    return {job, 2, 0, "token-" + job, g.pid(), g.start_time(), local_rank};
  }
};

TEST_F(LocalStateTest, RecordsSurviveARestartAndAreReplacedWhole) {
  {
    LocalState state(StatePath());
    ASSERT_TRUE(state.Load().ok());  // no file yet: empty
    EXPECT_TRUE(state.entries().empty());
    ASSERT_TRUE(state.Add({"job_a", 1, 0, "t1", 1000, 55, 0}).ok());
    ASSERT_TRUE(state.Add({"job_a", 1, 0, "t1", 1001, 56, 1}).ok());
    ASSERT_TRUE(state.Add({"job_b", 3, 1, "t2", 1002, 57, 0}).ok());
    ASSERT_TRUE(state.Add({"job_b", 3, 1, "t2", 1003, 58, 0}).ok());  // replaces rank 1.0
    EXPECT_EQ(state.Add({"job_c", 1, 0, "t", 0, 1, 0}).code(), StatusCode::kInvalidArgument);
  }
  LocalState again(StatePath());
  ASSERT_TRUE(again.Load().ok());
  std::vector<LocalState::Entry> want = {{"job_a", 1, 0, "t1", 1000, 55, 0},
                                         {"job_a", 1, 0, "t1", 1001, 56, 1},
                                         {"job_b", 3, 1, "t2", 1003, 58, 0}};
  EXPECT_EQ(again.entries(), want);
  ASSERT_TRUE(again.RemoveRank("job_a", 1, 0).ok());
  LocalState third(StatePath());
  ASSERT_TRUE(third.Load().ok());
  EXPECT_EQ(third.entries(), (std::vector<LocalState::Entry>{want[2]}));
  // Only the record itself is in the directory: no temporary file was left.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(LocalStateTest, ADamagedRecordIsRefusedWithItsName) {
  for (const char* text :
       {"{not json", "{\"version\": 1}", "{\"version\": 9, \"process_groups\": []}",
        "{\"version\": 1, \"process_groups\": [{\"job_id\": 5}]}"}) {
    std::ofstream(StatePath(), std::ios::trunc) << text;
    LocalState state(StatePath());
    Status s = state.Load();
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << text;
    EXPECT_NE(s.message().find(StatePath().string()), std::string::npos) << s.message();
  }
}

TEST_F(LocalStateTest, OrphansStillRunningAreKilledAndEveryRankIsReportedLostOnce) {
  auto rank0 = Start(Spec({"sleep", "1000"}));
  auto rank0_local1 = Start(Spec({"sleep", "1000"}));
  auto other = Start(Spec({"sleep", "1000"}));
  ASSERT_TRUE(rank0 && rank0_local1 && other);
  {
    LocalState before(StatePath());
    ASSERT_TRUE(before.Add(EntryFor(*rank0, "job_a", 0)).ok());
    ASSERT_TRUE(before.Add(EntryFor(*rank0_local1, "job_a", 1)).ok());
    // A pid recorded with another start time is someone else's process now: left alone.
    LocalState::Entry reused = EntryFor(*other, "job_b");
    reused.start_time += 1;
    ASSERT_TRUE(before.Add(reused).ok());
    // And one that has ended long ago.
    ASSERT_TRUE(before.Add({"job_c", 1, 0, "t", 999'999'999, 1, 0}).ok());
  }
  LocalState restarted(StatePath());
  ASSERT_TRUE(restarted.Load().ok());
  std::vector<LocalState::Entry> lost = worker::KillOrphans(restarted);

  std::set<std::string> jobs;
  for (const auto& e : lost) jobs.insert(e.job_id + "/" + e.token);
  EXPECT_EQ(lost.size(), 3u);
  EXPECT_EQ(jobs, (std::set<std::string>{"job_a/token-job_a", "job_b/token-job_b", "job_c/t"}));
  EXPECT_EQ(*rank0->Wait(), (ExitStatus{-1, SIGKILL}));
  EXPECT_EQ(*rank0_local1->Wait(), (ExitStatus{-1, SIGKILL}));
  auto untouched = other->TryWait();
  ASSERT_TRUE(untouched.ok());
  EXPECT_FALSE(untouched->has_value());
  // Forgotten: the next restart has nothing to report.
  LocalState next(StatePath());
  ASSERT_TRUE(next.Load().ok());
  EXPECT_TRUE(next.entries().empty());
}

TEST_F(LocalStateTest, MembersOfAGroupWhoseLeaderIsGoneAreKilled) {
  // A leader (not supervised by a ProcessGroup) that starts a member of its group and exits.
  int report[2], go[2];
  ASSERT_EQ(pipe2(report, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(go, O_CLOEXEC), 0);
  pid_t leader = fork();
  ASSERT_GE(leader, 0);
  if (leader == 0) {
    close(report[0]);
    close(go[1]);
    setsid();
    pid_t member = fork();
    if (member == 0) {
      execl("/bin/sleep", "sleep", "1000", static_cast<char*>(nullptr));
      _exit(127);
    }
    (void)!write(report[1], &member, sizeof member);
    char byte;
    (void)!read(go[0], &byte, 1);
    _exit(0);
  }
  close(report[1]);
  close(go[0]);
  pid_t member = 0;
  ASSERT_EQ(read(report[0], &member, sizeof member), static_cast<ssize_t>(sizeof member));
  close(report[0]);
  auto st = worker::ReadProcStat(leader);
  ASSERT_TRUE(st.ok() && st->has_value());
  const uint64_t start_time = (*st)->start_time;
  close(go[1]);  // the leader exits
  int status = 0;
  ASSERT_EQ(waitpid(leader, &status, 0), leader);
  ASSERT_TRUE(Eventually(
      [&] {
        auto m = worker::ReadProcStat(member);
        return m.ok() && m->has_value() && (*m)->pgrp == leader && (*m)->state != 'Z';
      },
      kPatience, kLookEvery));

  LocalState state(StatePath());
  ASSERT_TRUE(state.Add({"job_a", 1, 0, "t", leader, start_time, 0}).ok());
  EXPECT_EQ(worker::KillOrphans(state).size(), 1u);
  EXPECT_TRUE(WaitEnded(member));
}

}  // namespace
}  // namespace tf::testing
