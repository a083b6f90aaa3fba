// The production ReplicaRunner (replicas as jobs of the job service) and ReplicaProbe (HTTP).
#include "endpoints/endpoint_controller.h"
#include "http/http.h"
#include "jobs/job_doc.h"

namespace tf::endpoints {
namespace {

constexpr int kJobListLimit = 10'000;

class JobReplicaRunner final : public ReplicaRunner {
 public:
  JobReplicaRunner(jobs::JobService& jobs, store::NodeStore& nodes) : jobs_(jobs), nodes_(nodes) {}

  Result<std::string> Start(const std::string& project_id, const jobs::JobSpec& spec) override {
    TF_ASSIGN_OR_RETURN(auto active, jobs_.List(project_id, false, kJobListLimit));
    for (const jobs::Job& job : active) {
      if (job.record.name == spec.name) return job.id();
    }
    TF_ASSIGN_OR_RETURN(jobs::Job job, jobs_.SubmitSpec(project_id, spec, "endpoint replica", ""));
    return job.id();
  }

  Result<ReplicaJob> Inspect(const std::string& project_id, const std::string& job_id) override {
    TF_ASSIGN_OR_RETURN(jobs::Job job, jobs_.Get(project_id, job_id));
    ReplicaJob out;
    out.state = job.state();
    out.reason = job.doc.reason;
    out.ended = jobs::IsTerminalJobState(job.state());
    if (!out.ended && !job.doc.attempts.empty()) {
      const jobs::Attempt& a = job.doc.attempts.back();
      if (!a.ended() && !a.ranks.empty() && a.ranks[0].state == "running") {
        out.node_id = a.ranks[0].node_id;
        out.address = a.ranks[0].address + ":" + std::to_string(a.master_port);
        out.on_spot = a.ranks[0].spot;
      }
    }
    if (!out.node_id.empty()) {
      auto node = nodes_.GetNode(out.node_id);
      if (!node.ok() && node.status().code() != StatusCode::kNotFound) return node.status();
      out.node_draining = node.ok() && node->state == "draining";
    }
    return out;
  }

  Status Stop(const std::string& project_id, const std::string& job_id,
              const std::string& reason) override {
    return jobs_.Cancel(project_id, job_id, reason).status();
  }

  Result<bool> WouldPlaceNow(const std::string& project_id, const jobs::JobSpec& spec) override {
    return jobs_.WouldPlaceNow(spec);
  }

  Result<std::string> ModelUrl(const std::string& project_id, const ModelSource& source) override {
    if (source.kind != ModelSourceKind::kJobOutput) return source.location;
    std::string job_id;
    if (source.location.starts_with("job_")) {
      TF_ASSIGN_OR_RETURN(jobs::Job job, jobs_.Get(project_id, source.location));
      if (job.state() != jobs::kSucceeded) {
        return FailedPrecondition("model: job " + job.id() + " is " + job.state() +
                                  ", not succeeded: it has no output/model to serve yet");
      }
      job_id = job.id();
    } else {
      TF_ASSIGN_OR_RETURN(auto all, jobs_.List(project_id, true, kJobListLimit));
      for (const jobs::Job& job : all) {  // oldest first: the last match is the latest
        if (job.record.name == source.location && job.state() == jobs::kSucceeded) {
          job_id = job.id();
        }
      }
      if (job_id.empty()) {
        return FailedPrecondition("model: no succeeded job named '" + source.location +
                                  "' in the project");
      }
    }
    return "tf://" + std::string(jobs::kJobsBucket) + "/" + jobs::OutputPrefix(job_id) + "/model";
  }

 private:
  jobs::JobService& jobs_;
  store::NodeStore& nodes_;
};

class HttpReplicaProbe final : public ReplicaProbe {
 public:
  bool Healthy(const std::string& address, const std::string& path,
               std::chrono::milliseconds timeout) override {
    if (address.empty()) return false;
    auto client = http::Client::Create("http://" + address);
    if (!client.ok()) return false;
    auto r = (*client)->Send("GET", path, {}, "", timeout);
    return r.ok() && r->status == 200;
  }
};

}  // namespace

std::unique_ptr<ReplicaRunner> NewJobReplicaRunner(jobs::JobService& jobs,
                                                   store::NodeStore& nodes) {
  return std::make_unique<JobReplicaRunner>(jobs, nodes);
}

std::unique_ptr<ReplicaProbe> NewHttpReplicaProbe() { return std::make_unique<HttpReplicaProbe>(); }

}  // namespace tf::endpoints
