// `tensorfleet run|ps|describe|logs|cancel`: managed jobs (docs/jobs.md).
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "base/crypto.h"
#include "base/sha256_stream.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "client/object_client.h"
#include "jobs/hyperparameter_settings.h"
#include "jobs/job_doc.h"
#include "jobs/job_spec.h"
#include "worker/code_bundle.h"
#include "worker/log_shipper.h"

namespace tf::cli {
namespace {

namespace fs = std::filesystem;

struct JobRunFlags {
  std::string spec_path;
  bool follow = false;            // stream the log; the exit code is the job's outcome
  std::vector<std::string> sets;  // --set NAME=VALUE: hyperparameters for this run
};

struct JobPsFlags {
  bool all = false;  // finished jobs too
};

struct JobDescribeFlags {
  std::string id;
};

struct JobLogsFlags {
  std::string id;
  bool follow = false;
  int attempt = 0;  // 0: the latest
  int node = 0;
  int rank = 0;
};

struct JobCancelFlags {
  std::string id;
};

std::string MiB(uint64_t bytes) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return s.str();
}

bool IsFinished(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled";
}

std::string LatestAttempt(const Json& job) {
  if (!job.contains("attempts") || job["attempts"].empty()) return "-";
  const Json& a = job["attempts"].back();
  return std::to_string(a.value("attempt", 0)) + " (" + a.value("state", "") + ")";
}

std::string NodesOf(const Json& job) {
  if (!job.contains("attempts") || job["attempts"].empty()) return "-";
  std::string out;
  for (const Json& r : job["attempts"].back()["ranks"]) {
    out += (out.empty() ? "" : ",") + r.value("node", "");
  }
  return out.empty() ? "-" : out;
}

// Prints the log of one rank from chunk `from` on; returns the next chunk number.
Result<int64_t> PrintChunks(client::ObjectClient& objects, const std::string& prefix,
                            int64_t from) {
  for (;;) {
    TF_ASSIGN_OR_RETURN(std::vector<worker::LogChunk> chunks,
                        worker::ReadLogChunks(objects, jobs::kJobsBucket, prefix, from));
    if (chunks.empty()) return from;
    for (const worker::LogChunk& c : chunks) {
      std::cout << c.bytes;
      from = c.number + 1;
    }
    std::cout.flush();
  }
}

// The reason column of `ps`: why a waiting job waits, else why the job is in its state; cut at
// a word boundary to keep the table readable (`describe` shows it whole).
std::string ReasonCell(const Json& job) {
  constexpr size_t kWidth = 60;
  std::string reason = job.contains("waiting_reason")
                           ? "waiting: " + job.value("waiting_reason", "")
                           : job.value("reason", "");
  if (reason.size() <= kWidth) return reason;
  size_t cut = reason.rfind(' ', kWidth - 3);
  if (cut == std::string::npos || cut == 0) cut = kWidth - 3;
  while (cut > 0 && (reason[cut - 1] == ';' || reason[cut - 1] == ',')) --cut;
  return reason.substr(0, cut) + "...";
}

void PrintJob(const Json& j) {
  std::cout << "job:        " << j.value("id", "") << " (" << j.value("name", "") << ")\n"
            << "state:      " << j.value("state", "") << ": " << j.value("reason", "") << "\n";
  if (j.contains("waiting_reason")) {
    auto since = j.find("waiting_since");
    std::cout << "waiting:    " << j.value("waiting_reason", "") << " (since "
              << (since != j.end() && since->is_string() ? since->get<std::string>() : "-")
              << ")\n";
  }
  std::cout << "submitted:  " << j.value("created_at", "") << " from " << j.value("source", "")
            << "\n";
  if (j.contains("exit_code")) std::cout << "exit code:  " << j["exit_code"] << "\n";
  std::cout << "recoveries: " << j.value("recoveries", 0)
            << " (attempts started again after an interruption or a lost node)\n";
  const Json& spec = j["spec"];
  std::cout << "resources:  " << spec.value("nodes", 1) << " node(s) x "
            << spec["resources"].value("gpus", 0) << " GPU(s), "
            << spec["resources"].value("cpus", 1) << " CPU(s)\n";
  if (j.contains("next_attempt_after")) {
    std::cout << "next try:   after " << j.value("next_attempt_after", "") << "\n";
  }
  std::cout << "\nattempts:\n";
  Table attempts(
      {"attempt", "state", "node rank", "node", "gpus", "rank state", "exit", "started", "ended"});
  for (const Json& a : j["attempts"]) {
    for (const Json& r : a["ranks"]) {
      std::string gpus;
      for (const Json& g : r["gpus"])
        gpus += (gpus.empty() ? "" : ",") + std::to_string(g.get<int>());
      std::string exit = r.contains("signal") ? "signal " + std::to_string(r["signal"].get<int>())
                         : r.contains("exit_code") ? std::to_string(r["exit_code"].get<int>())
                                                   : "-";
      attempts.Add({std::to_string(a.value("attempt", 0)), a.value("state", ""),
                    std::to_string(r.value("node_rank", 0)), r.value("node", ""),
                    gpus.empty() ? "-" : gpus, r.value("state", ""), exit, Cell(r["started_at"]),
                    Cell(r["ended_at"])});
    }
  }
  attempts.Print(std::cout);
  for (const Json& a : j["attempts"]) {
    if (!a.value("reason", "").empty()) {
      std::cout << "  attempt " << a.value("attempt", 0) << ": " << a.value("reason", "") << "\n";
    }
  }
  // The tail of the log of the rank that decided a failure.
  if (j.value("state", "") == "failed" && !j["attempts"].empty()) {
    for (const Json& r : j["attempts"].back()["ranks"]) {
      if (!r.value("log_tail", "").empty() && r.value("state", "") == "failed") {
        std::cout << "\nlast lines of node rank " << r.value("node_rank", 0) << ":\n"
                  << r.value("log_tail", "");
        break;
      }
    }
  }
}

}  // namespace

Result<std::string> UploadJobCode(client::ApiClient& api, const fs::path& spec_path,
                                  const jobs::JobSpec& spec) {
  fs::path dir = spec_path.parent_path() / spec.code;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return InvalidArgument(spec_path.string() + ": code: " + dir.string() + " is not a directory");
  }
  fs::path bundle = fs::temp_directory_path() / ("tensorfleet-code-" + RandomHex(6) + ".tar.gz");
  worker::PackOptions options;
  options.exclude = {spec.checkpoint.dir, "output"};
  auto packed = worker::Pack(dir, bundle, options);
  if (!packed.ok()) return packed.status().WithContext("packing " + dir.string());
  auto sha = Sha256OfFile(bundle);
  if (!sha.ok()) {
    fs::remove(bundle, ec);
    return sha.status();
  }
  std::string key = "bundles/" + *sha + ".tar.gz";
  auto bucket = api.Call("POST", "/v1/buckets", Json{{"name", jobs::kJobsBucket}});
  if (!bucket.ok() && bucket.status().code() != StatusCode::kAlreadyExists) {
    fs::remove(bundle, ec);
    return bucket.status();
  }
  auto objects = client::MakeHttpObjectClient(api.server(), api.token());
  if (!objects.ok()) return objects.status();
  Status put = (*objects)->PutFileChecked(jobs::kJobsBucket, key, bundle, *sha);
  fs::remove(bundle, ec);
  TF_RETURN_IF_ERROR(put.WithContext("uploading the code"));
  std::cerr << "code: " << packed->files << " files (" << MiB(packed->bytes) << ") from "
            << dir.string() << "\n";
  return key;
}

Result<int> PrintJobLogs(const client::Connection& conn, const std::string& id, bool follow,
                         int attempt_flag, int node, int rank) {
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  TF_ASSIGN_OR_RETURN(std::unique_ptr<client::ObjectClient> objects,
                      client::MakeHttpObjectClient(api.server(), api.token()));
  int shown_attempt = 0;
  int64_t next = 0;
  for (;;) {
    TF_ASSIGN_OR_RETURN(Json job, api.Call("GET", "/v1/jobs/" + id));
    int latest = job["attempts"].empty() ? 0 : job["attempts"].back().value("attempt", 0);
    int attempt = attempt_flag > 0 ? attempt_flag : latest;
    if (attempt > 0 && attempt != shown_attempt) {
      if (shown_attempt != 0) {
        // What the last attempt wrote before it ended (its worker ships it before reporting).
        TF_RETURN_IF_ERROR(
            PrintChunks(*objects, jobs::LogPrefix(id, shown_attempt, node, rank), next).status());
        std::cout << "----- attempt " << attempt << " -----\n";
      }
      shown_attempt = attempt;
      next = 0;
    }
    bool finished = IsFinished(job.value("state", ""));
    if (attempt > 0) {
      TF_ASSIGN_OR_RETURN(next,
                          PrintChunks(*objects, jobs::LogPrefix(id, attempt, node, rank), next));
    }
    if (!follow) return 0;
    if (finished) {
      // The worker ships the last lines just before it reports: one more look.
      if (attempt > 0) {
        auto n = PrintChunks(*objects, jobs::LogPrefix(id, attempt, node, rank), next);
        if (n.ok()) next = *n;
      }
      std::cerr << "job " << id << " " << job.value("state", "") << "\n";
      return job.value("state", "") == "succeeded" ? 0 : 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
  }
}

void AddJobCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto run_flags = std::make_shared<JobRunFlags>();
  auto* run = app.add_subcommand(
      "run",
      "Submit a managed job from a YAML spec (docs/jobs-spec.md): its code directory is "
      "uploaded, and the platform runs it to completion, resuming it from its last "
      "checkpoint after an interruption");
  run->add_option("spec", run_flags->spec_path, "The job spec, e.g. examples/llama-train/job.yaml")
      ->required();
  run->add_flag("-f,--follow", run_flags->follow,
                "Stream the job's log until it ends; exit 0 only if it succeeded");
  run->add_option("--set", run_flags->sets,
                  "A hyperparameter for this run, NAME=VALUE (repeatable): added to the spec's "
                  "or replacing its value; typed as in YAML (3e-4 a number, true, text)")
      ->allow_extra_args(false);
  RunExitCode(run, exit_code, [&conn, f = run_flags]() -> Result<int> {
    TF_ASSIGN_OR_RETURN(std::string text, ReadTextFile(f->spec_path));
    TF_ASSIGN_OR_RETURN(jobs::JobSpec spec,
                        jobs::ParseJobSpec(text, fs::path(f->spec_path).filename().string()));
    Json settings = Json::object();
    for (const std::string& set : f->sets) {
      TF_ASSIGN_OR_RETURN(auto setting, jobs::ParseHyperparameterSetting(set));
      settings[setting.first] = setting.second;
    }
    // Checked here too, so that a bad setting is named before any code is uploaded.
    TF_RETURN_IF_ERROR(jobs::ApplyHyperparameterSettings(spec, settings));
    TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
    std::string code_key;
    if (!spec.code.empty()) {
      TF_ASSIGN_OR_RETURN(code_key, UploadJobCode(api, f->spec_path, spec));
    }
    TF_ASSIGN_OR_RETURN(Json job,
                        api.Call("POST", "/v1/jobs",
                                 Json{{"spec", text},
                                      {"source", fs::path(f->spec_path).filename().string()},
                                      {"code_key", code_key},
                                      {"set", settings}}));
    if (conn.json) {
      PrintJson(job);
    } else {
      std::cout << job.value("id", "") << "\n";
      std::cerr << "job " << job.value("id", "") << " (" << job.value("name", "") << ") "
                << job.value("state", "") << "; follow it with: tensorfleet logs -f "
                << job.value("id", "") << "\n";
    }
    if (!f->follow) return 0;
    return PrintJobLogs(conn, job.value("id", ""), true, 0, 0, 0);
  });

  auto ps_flags = std::make_shared<JobPsFlags>();
  auto* ps =
      app.add_subcommand("ps", "List the project's jobs that have not finished (--all: every job)");
  ps->add_flag("-a,--all", ps_flags->all, "Include finished jobs");
  RunStatus(ps, exit_code, [&conn, f = ps_flags] {
    TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
    TF_ASSIGN_OR_RETURN(Json jobs,
                        api.Call("GET", std::string("/v1/jobs") + (f->all ? "?all=true" : "")));
    if (conn.json) {
      PrintJson(jobs);
      return OkStatus();
    }
    Table t({"id", "name", "state", "attempt", "nodes", "created", "reason"});
    for (const Json& j : jobs["jobs"]) {
      t.Add({j.value("id", ""), j.value("name", ""), j.value("state", ""), LatestAttempt(j),
             NodesOf(j), j.value("created_at", ""), ReasonCell(j)});
    }
    t.Print(std::cout);
    return OkStatus();
  });

  auto describe_flags = std::make_shared<JobDescribeFlags>();
  auto* describe = app.add_subcommand(
      "describe",
      "Show a job: its attempts, the nodes and exit codes of each, recoveries, the "
      "events that explain every transition, and its latest metrics");
  describe->add_option("job", describe_flags->id, "Job id")->required();
  RunStatus(describe, exit_code, [&conn, f = describe_flags] {
    TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
    auto job = api.Call("GET", "/v1/jobs/" + f->id);
    auto events = job.ok() ? api.Call("GET", "/v1/jobs/" + f->id + "/events") : job;
    auto metrics = job.ok() ? api.Call("GET", "/v1/jobs/" + f->id + "/metrics") : job;
    for (const auto* r : {&job, &events, &metrics}) TF_RETURN_IF_ERROR(r->status());
    if (conn.json) {
      Json out = *job;
      out["events"] = (*events)["events"];
      out["metrics"] = (*metrics)["metrics"];
      PrintJson(out);
      return OkStatus();
    }
    PrintJob(*job);
    std::cout << "\nevents:\n";
    for (const Json& e : (*events)["events"]) {
      std::cout << "  " << e.value("at", "") << "  " << e.value("kind", "") << ": "
                << e.value("message", "") << "\n";
    }
    std::map<std::string, Json> latest;
    for (const Json& m : (*metrics)["metrics"]) latest[m.value("name", "")] = m;
    if (!latest.empty()) {
      std::cout << "\nmetrics (latest):\n";
      for (const auto& [name, m] : latest) {
        std::cout << "  " << name << " = " << m["value"]
                  << (m.contains("step") ? " at step " + std::to_string(m["step"].get<int64_t>())
                                         : "")
                  << " (attempt " << m.value("attempt", 0) << ")\n";
      }
    }
    return OkStatus();
  });

  auto logs_flags = std::make_shared<JobLogsFlags>();
  auto* logs = app.add_subcommand(
      "logs", "Print a job's log (kept in the object service, so it outlives the machine)");
  logs->add_option("job", logs_flags->id, "Job id")->required();
  logs->add_flag("-f,--follow", logs_flags->follow,
                 "Keep printing as the job writes, across attempts, until it ends");
  logs->add_option("--attempt", logs_flags->attempt, "Attempt number (default: the latest)");
  logs->add_option("--node", logs_flags->node, "Node rank")->capture_default_str();
  logs->add_option("--rank", logs_flags->rank, "Local rank on that node")->capture_default_str();
  RunExitCode(logs, exit_code, [&conn, f = logs_flags] {
    return PrintJobLogs(conn, f->id, f->follow, f->attempt, f->node, f->rank);
  });

  auto cancel_flags = std::make_shared<JobCancelFlags>();
  auto* cancel = app.add_subcommand(
      "cancel",
      "Cancel a job in any state: its processes get SIGTERM, then SIGKILL after the grace period");
  cancel->add_option("job", cancel_flags->id, "Job id")->required();
  RunStatus(cancel, exit_code, [&conn, f = cancel_flags] {
    TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
    TF_ASSIGN_OR_RETURN(Json job, api.Call("POST", "/v1/jobs/" + f->id + "/cancel"));
    if (conn.json)
      PrintJson(job);
    else
      std::cout << f->id << " " << job.value("state", "") << "\n";
    return OkStatus();
  });
}

}  // namespace tf::cli
