// Jobs run as users of their own where the worker is root (worker/job_user.h): a job reads
// neither the server's data directory (the admin token, the database), nor the worker's
// directory, nor another job's files, nor the worker's /proc entries. Skipped where the tests
// do not run as root, since jobs then run as the worker's user (docs/security.md).
#include <unistd.h>

#include "http_test_util.h"  // first: see the note in base/async.h
#include "jobs_test_util.h"
#include "worker/cgroups.h"
#include "worker/job_user.h"

namespace tf::testing {
namespace {

class JobsIsolationTest : public JobsFixture {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "jobs run as their own users only under a root worker";
    JobsFixture::SetUp();
  }

  // The job's output file `name`, as the object service has it.
  std::string Output(const std::string& id, const std::string& name) {
    return RawGet("/v1/buckets/tensorfleet-jobs/objects/" + id + "/output/" + name)
        .value_or("(no " + name + ")");
  }
};

TEST_F(JobsIsolationTest, AJobReadsNothingOfTheServerTheWorkerOrAnotherJob) {
  StartWorker("w1", 2);
  const std::string server_dir = (dir_.path() / "server").string();
  const std::string attempts = (dir_.path() / "w1" / "attempts").string();

  // A job that keeps a secret in its working directory while the other one looks.
  auto keeper = Submit(
      "name: keeper\n"
      "command: echo kept-secret > secret.txt; chmod 644 secret.txt; touch "
      "$TENSORFLEET_OUTPUT_DIR/ready; "
      "sleep 30\n"
      "resources: {gpus: 1}\n");
  ASSERT_TRUE(keeper.ok()) << keeper.status().ToString();
  std::string keeper_id = (*keeper)["id"];
  WaitForState(keeper_id, "running");

  // Each probe prints "<what>: read" or "<what>: denied".
  auto prober = Submit(
      "name: prober\n"
      "env: {SERVER_DIR: '" +
      server_dir + "', ATTEMPTS: '" + attempts + "', KEEPER: '" + keeper_id +
      "'}\n"
      "command: |\n"
      "  probe() { if cat \"$2\" > /dev/null 2>&1; then echo \"$1: read\"; else echo \"$1: "
      "denied\"; fi; }\n"
      "  {\n"
      "  echo \"uid: $(id -u)\"\n"
      "  probe admin-token \"$SERVER_DIR/admin-token\"\n"
      "  probe database \"$SERVER_DIR/tensorfleet.db\"\n"
      "  probe other-job \"$ATTEMPTS/$KEEPER-1-0/work/secret.txt\"\n"
      "  probe worker-environ /proc/$PPID/environ\n"
      "  if ls \"$ATTEMPTS\" > /dev/null 2>&1; then echo 'list-attempts: read'; else echo "
      "'list-attempts: denied'; fi\n"
      "  echo own > \"$TENSORFLEET_CHECKPOINT_DIR/own.txt\" && echo 'own-checkpoint: written'\n"
      "  echo \"home: $HOME\"\n"
      "  } > \"$TENSORFLEET_OUTPUT_DIR/probes.txt\"\n"
      "resources: {gpus: 1}\n");
  ASSERT_TRUE(prober.ok()) << prober.status().ToString();
  std::string prober_id = (*prober)["id"];
  Json done = WaitFor(prober_id, Finished);
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2) << Log(prober_id, 1);
  std::string probes = Output(prober_id, "probes.txt");
  for (const char* line :
       {"admin-token: denied", "database: denied", "other-job: denied", "worker-environ: denied",
        "list-attempts: denied", "own-checkpoint: written"}) {
    EXPECT_NE(probes.find(line), std::string::npos) << line << " in:\n" << probes;
  }
  const std::string uid = "uid: " + std::to_string(worker::JobUserFor(prober_id).uid);
  EXPECT_NE(probes.find(uid), std::string::npos) << probes;
  EXPECT_NE(probes.find("home: " + attempts + "/" + prober_id + "-1-0/work"), std::string::npos)
      << probes;

  auto cancelled = api_->Call("POST", "/v1/jobs/" + keeper_id + "/cancel", Json::object());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  WaitFor(keeper_id, Finished);
}

// A rank over its resources.memory is killed by the kernel inside its cgroup, and the job says
// so. Skipped where this machine gives no memory controller to make groups in.
TEST_F(JobsIsolationTest, AJobOverItsMemoryLimitIsKilledAndDescribeSaysOutOfMemory) {
  auto cgroups = worker::Cgroups::Setup("/", "node_probe_" + std::to_string(::getpid()));
  if (!cgroups.ok()) GTEST_SKIP() << "no cgroups here: " << cgroups.status().ToString();
  bool memory = cgroups->Describe().find("memory") != std::string::npos;
  cgroups->Release();
  if (!memory) GTEST_SKIP() << "no memory controller here: " << cgroups->Describe();
  StartWorker("w1", 2);
  auto hog = Submit(
      "name: hog\n"
      "command: /usr/bin/python3 -c 'b = bytearray(512 << 20); print(len(b))'\n"
      "resources: {gpus: 1, memory: 64Mi}\n");
  ASSERT_TRUE(hog.ok()) << hog.status().ToString();
  std::string id = (*hog)["id"];
  Json done = WaitFor(id, Finished);
  ASSERT_EQ(done["state"], "failed") << done.dump(2) << Log(id, 1);
  std::string reason = done["attempts"][0].value("reason", "");
  EXPECT_NE(reason.find("out of memory: the rank went over resources.memory (64.0 MiB)"),
            std::string::npos)
      << done.dump(2);
  EXPECT_NE(Log(id, 1).find("out of memory"), std::string::npos) << Log(id, 1);
}

}  // namespace
}  // namespace tf::testing
