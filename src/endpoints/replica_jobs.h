// A replica of an endpoint runs as a managed job of its project (docs/endpoints.md, "How
// replicas run"): placed by the same scheduler as batch jobs, metered and budgeted like them,
// on whatever node the worker offers. This file turns an endpoint's spec into that job's spec.
//
// The job's one process is the model server: `tensorfleet engine serve` (the worker's own
// binary, $TENSORFLEET_BIN) or the spec's command, listening on the node's address and the port
// the scheduler gave the attempt ($TENSORFLEET_MASTER_ADDR, $TENSORFLEET_MASTER_PORT), which is
// where the gateway reaches it. A model kept in objects is copied into the job's directory
// first. The job never retries by itself: a replica that ends is replaced by the controller.
#pragma once

#include <string>
#include <string_view>

#include "endpoints/endpoint_spec.h"
#include "jobs/job_spec.h"

namespace tf::endpoints {

// The bucket and prefix of a model kept in objects ("tf://b/p" -> {"b", "p"}).
struct ObjectsLocation {
  std::string bucket;
  std::string prefix;
};

// How long before a drain's deadline a replica on a draining node is stopped, and how long its
// server then has to answer what it serves (the gateway has sent it nothing new by then if its
// replacement was ready in time).
inline constexpr TimeMs kReplicaDrainGraceMs = 30'000;

// The spec of the job that runs replica `replica_id` of `spec`. `model_url` is where the model
// is: a path on the node, or "tf://BUCKET/PREFIX" (a job's output already resolved to its
// objects). `api_key` is the replica's own key: its server answers only requests that bear it
// (in the job's environment as jobs::kEngineApiKeyEnv, never on a command line, which every
// user of the node can read).
jobs::JobSpec ReplicaJobSpec(const EndpointSpec& spec, std::string_view replica_id,
                             const std::string& model_url, const std::string& api_key);

// The job's name for a replica: the endpoint's name (cut to fit) and the replica id's suffix.
std::string ReplicaJobName(std::string_view endpoint_name, std::string_view replica_id);

// A command engine's argument with its placeholders ({model}, {port}, {host}, {gpus},
// {api_key}) made
// into shell words: the rest single-quoted, the placeholders as the variables that hold them.
std::string ShellWordWithPlaceholders(std::string_view arg, const std::string& model_word);

}  // namespace tf::endpoints
