// Endpoints under load, end to end: clients keep sending completions through the gateway (some
// streamed, some not) while the endpoint is updated, or the node under its replica is drained,
// and not one request fails. Also: two endpoints packed on one node, a spec that no node could
// run refused at `up`, and a prompt longer than the model's context answered in OpenAI's error
// shape. The replicas are real `tensorfleet engine serve` processes on the small test model.
#include <atomic>
#include <thread>

#include "base/mutex.h"
#include "endpoints_test_util.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

// Clients that send completions through the gateway in a loop until stopped, and count how
// each ended. A request fails if it got no answer, an answer that is not 200, or a stream that
// ended before its [DONE].
class Load {
 public:
  Load(std::string url, std::string token, std::string model, int clients)
      : url_(std::move(url)), token_(std::move(token)), model_(std::move(model)) {
    for (int i = 0; i < clients; ++i) {
      threads_.emplace_back([this, stream = i % 2 == 1] { Client(stream); });
    }
  }
  ~Load() { Stop(); }

  void Stop() {
    stop_ = true;
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

  int ok() const { return ok_.load(); }
  std::vector<std::string> failures() {
    MutexLock lock(mu_);
    return failures_;
  }

 private:
  void Client(bool stream) {
    auto client = http::Client::Create(url_);
    if (!client.ok()) return Failed(client.status().ToString());
    const http::Headers headers = {{"Content-Type", "application/json"},
                                   {"Authorization", "Bearer " + token_}};
    nlohmann::json body = {{"model", model_}, {"prompt", "hello"}, {"max_tokens", 4}};
    if (stream) body["stream"] = true;
    while (!stop_) {
      std::string streamed;
      auto r = stream ? (*client)->SendStreaming("POST", "/openai/v1/completions", headers,
                                                 body.dump(), std::chrono::seconds(60),
                                                 [&](std::string_view piece) {
                                                   streamed.append(piece);
                                                   return true;
                                                 })
                      : (*client)->Send("POST", "/openai/v1/completions", headers, body.dump(),
                                        std::chrono::seconds(60));
      if (!r.ok()) {
        Failed(r.status().ToString());
      } else if (r->status != 200) {
        Failed(std::to_string(r->status) + " " + r->body);
      } else if (stream && streamed.find("data: [DONE]") == std::string::npos) {
        Failed("a stream cut short: " + streamed);
      } else {
        ++ok_;
      }
    }
  }

  void Failed(std::string what) {
    MutexLock lock(mu_);
    failures_.push_back(std::move(what));
  }

  std::string url_, token_, model_;
  std::atomic<bool> stop_{false};
  std::atomic<int> ok_{0};
  Mutex mu_;
  std::vector<std::string> failures_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

class EndpointsLoadTest : public EndpointsFixture {
 protected:
  void TearDown() override {
    if (second_worker_.pid() > 0) {
      second_worker_.Kill(SIGTERM);
      second_worker_.Wait();
    }
    EndpointsFixture::TearDown();
  }

  std::string TinySpec(const std::string& name, int replicas, int max_batch) {
    std::string n = std::to_string(replicas);
    return "name: " + name + "\nmodel: " + EngineData("llama-gqa") +
           "\nengine:\n  builtin: {threads: 1, kv_cache: 64Mi, max_batch: " +
           std::to_string(max_batch) + "}\nresources: {cpus: 1}\nreplicas: {min: " + n +
           ", max: " + n + "}\n";
  }

  // Waits until the endpoint has exactly `n` replicas, all ready and of `generation`.
  Json WaitForReady(const std::string& name, size_t n, int generation) {
    return WaitFor(
        name,
        [&](const Json& e) {
          if (e["replicas"].size() != n) return false;
          for (const Json& r : e["replicas"]) {
            if (r["state"] != "ready" || r["generation"] != generation) return false;
          }
          return true;
        },
        std::to_string(n) + " ready replica(s) of generation " + std::to_string(generation),
        std::chrono::seconds(120));
  }

  // Lets the load run until it has had `n` more answers (or a minute).
  void LetRun(Load& load, int n) {
    int until = load.ok() + n;
    EXPECT_TRUE(Eventually([&] { return load.ok() >= until; }, std::chrono::seconds(60)))
        << load.ok() << " answers, wanted " << until;
  }

  ChildProcess second_worker_;
};

TEST_P(EndpointsLoadTest, ARollingUpdateUnderLoadFailsNoRequest) {
  Up("tiny", TinySpec("tiny", 2, 4));
  WaitForReady("tiny", 2, 1);
  Load load(server_->url(), token_, "tiny", 4);
  LetRun(load, 20);

  Up("tiny", TinySpec("tiny", 2, 2));  // a changed engine option: generation 2
  Json e = WaitForReady("tiny", 2, 2);
  LetRun(load, 20);
  load.Stop();
  EXPECT_EQ(load.failures(), std::vector<std::string>{}) << e.dump(2);
  // The replicas were replaced one at a time.
  std::string reasons = e["scaling"].dump();
  EXPECT_NE(reasons.find("rolling update to generation 2"), std::string::npos) << reasons;

  // describe shows the traffic the gateway passed, streams' tokens included.
  Json traffic = Describe("tiny")["traffic"];
  EXPECT_GE(traffic["requests"].get<int>(), load.ok()) << traffic.dump();
  EXPECT_EQ(traffic["errors"], 0) << traffic.dump();
  EXPECT_GE(traffic["completion_tokens"].get<int>(), load.ok()) << traffic.dump();
  EXPECT_GT(traffic["latency_ms"]["p50"].get<double>(), 0) << traffic.dump();
  EXPECT_GE(traffic["latency_ms"]["p99"], traffic["latency_ms"]["p50"]) << traffic.dump();
  EXPECT_TRUE(traffic["cost_per_million_tokens_usd"].is_number()) << traffic.dump();
  ProgramRun describe = Run({"endpoint", "describe", "tiny"});
  EXPECT_NE(describe.output.find("through the gateway"), std::string::npos) << describe.output;
}

TEST_P(EndpointsLoadTest, ANodeDrainedUnderLoadFailsNoRequest) {
  ASSERT_TRUE(StartTensorfleetWorker(second_worker_, server_->url(), server_->token(),
                                     (dir_.path() / "worker-2").string(), 0,
                                     {"--cpus", "4", "--label", "run=" + run_}));
  Up("tiny", TinySpec("tiny", 1, 4));
  Json e = WaitForReady("tiny", 1, 1);
  std::string node = e["replicas"][0]["node_id"];
  std::string first = e["replicas"][0]["id"];
  std::string first_job = e["replicas"][0]["job_id"];
  Load load(server_->url(), token_, "tiny", 4);
  LetRun(load, 20);

  // The replica serves on until its replacement is ready (its worker would stop it 30 s
  // before the deadline), and is then drained by its endpoint, not interrupted by the drain.
  ProgramRun drain = RunTensorfleetOn(server_->url(), server_->token(),
                                      {"worker", "drain", "--node", node, "--deadline", "10m"});
  ASSERT_EQ(drain.exit_code, 0) << drain.output;
  e = WaitFor(
      "tiny",
      [&](const Json& e) {
        return e["replicas"].size() == 1 && e["replicas"][0]["id"] != first &&
               e["replicas"][0]["state"] == "ready";
      },
      "the replica replaced on the other node", std::chrono::seconds(120));
  EXPECT_NE(e["replicas"][0]["node_id"], node);
  LetRun(load, 20);
  load.Stop();
  EXPECT_EQ(load.failures(), std::vector<std::string>{}) << e.dump(2);
  std::string reasons = e["scaling"].dump();
  EXPECT_NE(reasons.find("its node " + node +
                         " is draining: replaced, serving until the replacement is ready"),
            std::string::npos)
      << reasons;
  ProgramRun job = Run({"--json", "describe", first_job});
  Json described = Json::parse(job.output, nullptr, false);
  EXPECT_EQ(described.value("state", ""), "cancelled") << job.output;
  EXPECT_NE(job.output.find("endpoint tiny: drained"), std::string::npos) << job.output;
}

// spot: prefer places a replica on a spot node when one has room, and on on-demand capacity
// when none has: here, when the spot node under it drains.
TEST_P(EndpointsLoadTest, PreferringSpotFallsBackToOnDemand) {
  ASSERT_TRUE(StartTensorfleetWorker(second_worker_, server_->url(), server_->token(),
                                     (dir_.path() / "worker-spot").string(), 0,
                                     {"--cpus", "4", "--spot", "--label", "run=" + run_}));
  Json nodes;
  std::string spot_node;
  ASSERT_TRUE(Eventually([&] {
    ProgramRun r = RunTensorfleetOn(server_->url(), server_->token(), {"--json", "nodes"});
    nodes = Json::parse(r.output, nullptr, false);
    for (const Json& n : nodes.is_object() ? nodes["nodes"] : Json::array()) {
      if (n.value("spot", false) && n.value("state", "") == "ready") spot_node = n["id"];
    }
    return !spot_node.empty();
  })) << nodes.dump(2);
  Up("tiny", TinySpec("tiny", 1, 4) + "spot: prefer\n");
  Json e = WaitForReady("tiny", 1, 1);
  EXPECT_EQ(e["replicas"][0]["node_id"], spot_node) << "a spot node had room";

  ProgramRun drain =
      RunTensorfleetOn(server_->url(), server_->token(),
                       {"worker", "drain", "--node", spot_node, "--deadline", "10m"});
  ASSERT_EQ(drain.exit_code, 0) << drain.output;
  e = WaitFor(
      "tiny",
      [&](const Json& e) {
        return e["replicas"].size() == 1 && e["replicas"][0]["node_id"] != spot_node &&
               e["replicas"][0]["state"] == "ready";
      },
      "the replica moved to on-demand capacity", std::chrono::seconds(120));
}

// gpu_memory packs replicas onto one GPU by their declared memory: two 10 GiB servers share a
// 24 GiB GPU, and a third waits, saying why.
TEST_P(EndpointsLoadTest, EndpointsShareOneGpuByDeclaredMemory) {
  ASSERT_TRUE(StartTensorfleetWorker(
      second_worker_, server_->url(), server_->token(), (dir_.path() / "worker-gpu").string(), 1,
      {"--gpu-memory", "24Gi", "--cpus", "4", "--label", "run=" + run_}));
  Up("a", TinySpec("a", 1, 4) + "gpu_memory: 10Gi\n");
  Up("b", TinySpec("b", 1, 4) + "gpu_memory: 10Gi\n");
  Json a = WaitForReady("a", 1, 1)["replicas"][0];
  Json b = WaitForReady("b", 1, 1)["replicas"][0];
  EXPECT_EQ(a["node_id"], b["node_id"]);
  for (const Json& replica : {a, b}) {
    Json job = Json::parse(Run({"--json", "describe", replica["job_id"]}).output, nullptr, false);
    EXPECT_EQ(job["attempts"][0]["ranks"][0]["gpus"], Json::array({0})) << job.dump(2);
  }

  Up("c", TinySpec("c", 1, 4) + "gpu_memory: 10Gi\n");
  std::string reason;
  EXPECT_TRUE(Eventually([&] {
    Json e = Describe("c");
    if (e["replicas"].empty() || e["replicas"][0].value("job_id", "").empty()) return false;
    Json job =
        Json::parse(Run({"--json", "describe", e["replicas"][0]["job_id"]}).output, nullptr, false);
    reason = job.value("waiting_reason", "");
    return !reason.empty();
  })) << Describe("c").dump(2);
  EXPECT_NE(reason.find("needs 10 GiB free on one GPU"), std::string::npos) << reason;
  EXPECT_NE(reason.find("the most free on any GPU is 4 GiB"), std::string::npos) << reason;
}

TEST_P(EndpointsLoadTest, TwoEndpointsShareOneNode) {
  Up("tiny-a", TinySpec("tiny-a", 1, 4));
  Up("tiny-b", TinySpec("tiny-b", 1, 4));
  Json a = WaitForReady("tiny-a", 1, 1);
  Json b = WaitForReady("tiny-b", 1, 1);
  EXPECT_EQ(a["replicas"][0]["node_id"], b["replicas"][0]["node_id"]);
  for (const char* model : {"tiny-a", "tiny-b"}) {
    auto [status, body] =
        Post("/openai/v1/completions", {{"model", model}, {"prompt", "hello"}, {"max_tokens", 3}});
    EXPECT_EQ(status, 200) << body;
    EXPECT_EQ(Json::parse(body, nullptr, false)["model"], model) << body;
  }
}

TEST_P(EndpointsLoadTest, ASpecNoNodeCouldRunIsRefusedAtUp) {
  std::string spec = TinySpec("huge", 1, 4);
  spec.replace(spec.find("cpus: 1"), 7, "cpus: 64");
  ProgramRun up = Run({"endpoint", "up", WriteSpec("huge", spec)});
  EXPECT_NE(up.exit_code, 0);
  EXPECT_NE(up.output.find("endpoint huge: a replica cannot be placed: resources.cpus: 64 CPUs "
                           "per node requested; the largest node (of the on-demand nodes labelled "
                           "run=" +
                           run_ + ") has 4"),
            std::string::npos)
      << up.output;
  EXPECT_EQ(Run({"endpoint", "describe", "huge"}).exit_code, 1) << "nothing was created";
}

TEST_P(EndpointsLoadTest, APromptLongerThanTheContextGetsOpenAisErrorShape) {
  Up("tiny", TinySpec("tiny", 1, 4));
  WaitForReady("tiny", 1, 1);
  std::string prompt;
  for (int i = 0; i < 5000; ++i) prompt += "hello ";
  auto [status, body] =
      Post("/openai/v1/completions", {{"model", "tiny"}, {"prompt", prompt}, {"max_tokens", 3}});
  EXPECT_EQ(status, 400) << body;
  Json error = Json::parse(body, nullptr, false)["error"];
  ASSERT_TRUE(error.is_object()) << body;
  EXPECT_EQ(error["type"], "invalid_request_error");
  EXPECT_EQ(error["code"], "context_length_exceeded");
  EXPECT_EQ(error["param"], "prompt");
  EXPECT_NE(error["message"].get<std::string>().find("maximum context length"), std::string::npos)
      << body;
}

INSTANTIATE_TEST_SUITE_P(Backends, EndpointsLoadTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::testing
