// A server with a real clock and quick timeouts, and workers in this process or as child
// processes, for the managed-jobs tests.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "api/app.h"
#include "api_test_util.h"
#include "child_process.h"
#include "client/json_client.h"
#include "eventually.h"
#include "in_process_app.h"
#include "worker/worker.h"

namespace tf::testing {

inline bool Finished(const Json& j) {
  std::string s = j.value("state", "");
  return s == "succeeded" || s == "failed" || s == "cancelled";
}

// A job that counts steps, one every 50 ms, keeping the count in its checkpoint directory
// (written to a temporary name and renamed), and stops at `steps`. On SIGTERM it saves and
// exits 0, as the contract asks.
inline std::string CountingJob(const std::string& name, int steps, const std::string& extra = "") {
  return "name: " + name +
         "\n"
         "command: |\n"
         "  step=0\n"
         "  [ -f \"$TENSORFLEET_CHECKPOINT_DIR/step\" ] && step=$(cat "
         "\"$TENSORFLEET_CHECKPOINT_DIR/step\")\n"
         "  echo \"start at step $step (attempt $TENSORFLEET_ATTEMPT)\"\n"
         "  trap 'echo \"$step\" > \"$TENSORFLEET_CHECKPOINT_DIR/step.tmp\"; mv "
         "\"$TENSORFLEET_CHECKPOINT_DIR/step.tmp\" \"$TENSORFLEET_CHECKPOINT_DIR/step\"; echo "
         "\"saved at $step\"; exit 0' TERM\n"
         "  while [ $step -lt " +
         std::to_string(steps) +
         " ]; do\n"
         "    step=$((step+1))\n"
         "    echo \"$step\" > \"$TENSORFLEET_CHECKPOINT_DIR/step.tmp\"\n"
         "    mv \"$TENSORFLEET_CHECKPOINT_DIR/step.tmp\" \"$TENSORFLEET_CHECKPOINT_DIR/step\"\n"
         "    echo \"step=$step loss=$((100-step))\"\n"
         "    sleep 0.05 & wait $!\n"
         "  done\n"
         "  echo \"done at step $step\" > \"$TENSORFLEET_OUTPUT_DIR/result.txt\"\n"
         "resources: {gpus: 1, cpus: 1}\n"
         "checkpoint: {sync_interval: 10s}\n"
         "metrics: [{name: loss, regex: \"loss=([0-9]+)\"}]\n" +
         extra;
}

class JobsFixture : public ::testing::Test {
 protected:
  static constexpr TimeMs kHeartbeatTimeoutMs = 3000;

  // What a fixture built on this one changes of the server's options before it starts.
  virtual void Configure(api::AppOptions&) {}

  void SetUp() override {
    api::AppOptions o = InProcessAppOptions(dir_.path() / "server");
    o.controller_interval = std::chrono::milliseconds(100);
    o.heartbeat_timeout_ms = kHeartbeatTimeoutMs;
    Configure(o);
    auto started = StartInProcessApp(o);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    app_ = std::move(started->app);
    admin_token_ = started->admin_token;
    auto client = client::JsonClient::Create(app_->url(), admin_token_);
    ASSERT_TRUE(client.ok());
    api_ = std::move(client).value();
  }

  void TearDown() override {
    for (auto& w : workers_) w->Shutdown(std::chrono::seconds(2));
    workers_.clear();
    app_.reset();
  }

  worker::WorkerOptions WorkerOptionsFor(const std::string& name, int gpus = 1) {
    worker::WorkerOptions o;
    o.server_url = app_->url();
    o.token = admin_token_;
    o.data_dir = dir_.path() / name;
    o.name = name;
    o.address = "127.0.0.1";
    o.gpus = gpus;
    o.cpus = 4;
    o.memory_bytes = int64_t{8} << 30;
    o.heartbeat_interval = std::chrono::milliseconds(300);
    o.stop_grace = std::chrono::seconds(5);
    return o;
  }

  // A worker in this process. Returns its node id.
  std::string StartWorker(const std::string& name, int gpus = 1) {
    auto w = worker::Worker::Start(WorkerOptionsFor(name, gpus));
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (!w.ok()) return "";
    std::string id = (*w)->node_id();
    workers_.push_back(std::move(w).value());
    return id;
  }

  // Submits a spec (YAML text) whose code, if any, is already uploaded.
  Result<Json> Submit(const std::string& yaml, const std::string& code_key = "") {
    return api_->Call("POST", "/v1/jobs",
                      Json{{"spec", yaml}, {"source", "test.yaml"}, {"code_key", code_key}});
  }

  Json GetJob(const std::string& id) {
    auto j = api_->Call("GET", "/v1/jobs/" + id);
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    return j.ok() ? *j : Json();
  }

  // Polls until `pred` holds for the job (up to `timeout`); returns the last view.
  Json WaitFor(const std::string& id, const std::function<bool(const Json&)>& pred,
               std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    return PollJson([&] { return GetJob(id); }, pred, timeout, id);
  }

  Json WaitForState(const std::string& id, const std::string& state,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    return WaitFor(
        id, [&](const Json& j) { return j.value("state", "") == state; }, timeout);
  }

  std::vector<std::string> EventKinds(const std::string& id) {
    std::vector<std::string> out;
    auto e = api_->Call("GET", "/v1/jobs/" + id + "/events");
    if (!e.ok()) return out;
    for (const Json& x : (*e)["events"]) out.push_back(x.value("kind", ""));
    return out;
  }

  // The whole log of one rank, from the object service.
  std::string Log(const std::string& id, int attempt, int node_rank = 0) {
    std::string out;
    for (int chunk = 0;; ++chunk) {
      char name[16];
      std::snprintf(name, sizeof name, "%010d", chunk);
      auto r = RawGet("/v1/buckets/tensorfleet-jobs/objects/" + id + "/logs/attempt-" +
                      std::to_string(attempt) + "/node-" + std::to_string(node_rank) + "/rank-0/" +
                      name);
      if (!r) break;
      out += *r;
    }
    return out;
  }

  std::optional<std::string> RawGet(const std::string& target) {
    auto client = http::Client::Create(app_->url());
    if (!client.ok()) return std::nullopt;
    auto r = (*client)->Send("GET", target, {{"Authorization", "Bearer " + admin_token_}}, "",
                             std::chrono::seconds(30));
    if (!r.ok() || r->status != 200) return std::nullopt;
    return r->body;
  }

  TempDir dir_;
  std::unique_ptr<api::App> app_;
  std::string admin_token_;
  std::unique_ptr<client::JsonClient> api_;
  std::vector<std::unique_ptr<worker::Worker>> workers_;
};

}  // namespace tf::testing
