#include "cli/worker_flags.h"

#include "jobs/quantities.h"

namespace tf::cli {

void AddWorkerFlags(CLI::App* cmd, WorkerFlags& f, bool all) {
  cmd->add_option("--gpus", f.gpus,
                  "Declare N simulated GPUs instead of the ones NVML finds (machines without GPUs, "
                  "tests)");
  cmd->add_option("--gpu-memory", f.gpu_memory,
                  "With --gpus: each simulated GPU's memory, e.g. 24Gi, for jobs and endpoints "
                  "that take a share of one (resources.gpu_memory)");
  if (all) {
    cmd->add_option("--cpus", f.cpus, "CPUs to offer (default: all of the machine's)");
    cmd->add_option("--memory", f.memory, "Memory to offer, e.g. 64Gi (default: all)");
    cmd->add_option("--label", f.labels, "A label key=value for node selectors (repeatable)");
    cmd->add_option("--zone", f.zone, "Availability zone label");
    cmd->add_option("--placement-group", f.placement_group, "Placement group label");
    cmd->add_option("--price", f.price, "What the machine costs per hour, in USD");
    cmd->add_flag("--spot", f.spot, "The machine is spot (preemptible) capacity");
    cmd->add_option("--address", f.address,
                    "Address other nodes of a gang reach this one at (default: the one facing the "
                    "server)");
    cmd->add_option("--name", f.name, "Node name (default: the host name)");
    cmd->add_option("--heartbeat", f.heartbeat, "Heartbeat interval")->capture_default_str();
    cmd->add_option("--spot-notice-url", f.spot_notice_url,
                    "Poll this URL for a spot interruption notice (on EC2: "
                    "http://169.254.169.254/latest/meta-data/spot/instance-action)");
  }
  cmd->add_option("--grace", f.grace,
                  "How long a process gets between SIGTERM and SIGKILL when stopped")
      ->capture_default_str();
  cmd->add_flag("--jobs-as-worker-user", f.jobs_as_worker_user,
                "Run jobs as this worker's own user even when it is root (by default a root "
                "worker runs each job as a user of its own: docs/security.md)");
  cmd->add_flag("--no-resource-limits", f.no_resource_limits,
                "Do not limit each rank to its resources.cpus and resources.memory (by default "
                "a worker that may make cgroups gives each rank one: docs/security.md)");
  cmd->add_flag("--keep-attempt-dirs", f.keep_attempt_dirs,
                "Keep each rank's directory (its work, output and logs) after it ends, for "
                "debugging (by default it is removed once its outcome is reported: the output, "
                "checkpoint and logs are uploaded by then)");
  cmd->add_option("--worker-dir", f.worker_dir,
                  "Where the worker keeps its node id, its record of processes and the jobs' "
                  "working directories (default: DATA_DIR/worker)");
}

Result<worker::WorkerOptions> ToWorkerOptions(const WorkerFlags& f,
                                              const std::string& default_dir) {
  worker::WorkerOptions o;
  o.data_dir = f.worker_dir.empty() ? default_dir : f.worker_dir;
  if (f.gpus >= 0) {
    if (f.gpus > 64) return InvalidArgument("--gpus: at most 64");
    o.gpus = f.gpus;
  }
  if (!f.gpu_memory.empty()) {
    if (f.gpus < 0) return InvalidArgument("--gpu-memory: only with --gpus (simulated GPUs)");
    auto m = jobs::ParseMemory(f.gpu_memory);
    if (!m.ok()) return InvalidArgument("--gpu-memory: " + m.status().message());
    o.simulated_gpu_memory_bytes = *m;
  }
  if (f.cpus < 0) return InvalidArgument("--cpus: must be positive");
  o.cpus = f.cpus;
  if (!f.memory.empty()) {
    auto m = jobs::ParseMemory(f.memory);
    if (!m.ok()) return InvalidArgument("--memory: " + m.status().message());
    o.memory_bytes = *m;
  }
  for (const std::string& l : f.labels) {
    size_t eq = l.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("--label: expected key=value, got \"" + l + "\"");
    }
    o.labels[l.substr(0, eq)] = l.substr(eq + 1);
  }
  if (!f.zone.empty()) o.labels["zone"] = f.zone;
  if (!f.placement_group.empty()) o.labels["placement_group"] = f.placement_group;
  if (f.price < 0) return InvalidArgument("--price: must not be negative");
  o.price_per_hour = f.price;
  o.spot = f.spot;
  o.address = f.address;
  o.name = f.name;
  auto heartbeat = jobs::ParseDuration(f.heartbeat);
  if (!heartbeat.ok() || *heartbeat < 100) {
    return InvalidArgument("--heartbeat: expected a duration of at least 100ms, got \"" +
                           f.heartbeat + "\"");
  }
  o.heartbeat_interval = std::chrono::milliseconds(*heartbeat);
  auto grace = jobs::ParseDuration(f.grace);
  if (!grace.ok()) return InvalidArgument("--grace: " + grace.status().message());
  o.stop_grace = std::chrono::milliseconds(*grace);
  o.spot_notice_url = f.spot_notice_url;
  o.job_users = !f.jobs_as_worker_user;
  o.resource_limits = !f.no_resource_limits;
  o.keep_attempt_dirs = f.keep_attempt_dirs;
  return o;
}

}  // namespace tf::cli
