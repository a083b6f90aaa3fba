// What the API routes stand on. Owned by the App (api/app.h); routes hold references.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <string>

#include "api/metrics.h"
#include "api/router.h"
#include "auth/auth_service.h"
#include "base/clock.h"
#include "base/version.h"
#include "jobs/job_service.h"
#include "objects/object_service.h"
#include "queues/queue_service.h"
#include "queues/wakeups.h"
#include "store/store.h"

namespace tf::api {

struct Services {
  store::Store& store;
  auth::AuthService& auth;
  queues::QueueService& queues;
  queues::QueueWakeups& wakeups;
  objects::ObjectService& objects;
  jobs::JobService& jobs;
  // Wakes a node's assignment long poll (keyed by NodeWakeKey(node id)).
  queues::QueueWakeups& node_wakeups;
  asio::thread_pool& pool;  // for blocking calls (the store)
  Metrics& metrics;
  const Clock& clock;
  TimeMs started_at = 0;
  // Whether this server leads (runs the job controller); set once by the App before serving.
  const store::Leadership* leadership = nullptr;
};

void AddQueueRoutes(Router& router, Services& services);
void AddAuthRoutes(Router& router, Services& services);
// /v1/buckets and the objects in them (AddObjectRoutes adds the bucket routes too).
void AddObjectRoutes(Router& router, Services& services);
void AddBucketRoutes(Router& router, Services& services);
// The S3-compatible API (api/s3/s3_api.h): /v1/s3-keys, and every path outside /v1/, /healthz and
// /metrics; with a `virtual_host_domain` (lower-case, api/s3/addressing.h), also every
// request whose Host is BUCKET.DOMAIN, which names its bucket there.
void AddS3Routes(Router& router, Services& services, const std::string& virtual_host_domain);
// The SQS-compatible API (api/sqs/sqs_api.h): requests whose X-Amz-Target is AmazonSQS.* or whose
// signature is for service "sqs", whatever their path.
void AddSqsRoutes(Router& router, Services& services);
// /v1/jobs: submit, list, describe, cancel, events and metrics of a project's jobs.
void AddJobRoutes(Router& router, Services& services);
// /v1/nodes and the routes workers use: register (with a join token, an admin token or the
// node's credential), heartbeat, assignments, drain, reports, metrics.
void AddNodeRoutes(Router& router, Services& services);
// /v1/join-tokens: create, list and revoke the tokens that register new nodes (admins).
void AddJoinTokenRoutes(Router& router, Services& services);
// /v1/cost/report, and the spend and burn-rate gauges of /metrics.
void AddCostRoutes(Router& router, Services& services);
// The wake-up key of a node's long poll (hash collisions only cost a spurious wake-up).
int64_t NodeWakeKey(const std::string& node_id);
// /healthz, /metrics and /v1/status. `server_metrics` appends the HTTP server's own gauges.
void AddSystemRoutes(Router& router, Services& services,
                     std::function<void(std::string&)> server_metrics);

inline constexpr const char* kVersion = kTensorfleetVersion;

}  // namespace tf::api
