// The SQS-compatible API on the native API's port (docs/sqs-api.md): AWS's JSON 1.0 protocol
// (X-Amz-Target: AmazonSQS.*) and the Query protocol (Action=...), signed with SigV4 for service
// "sqs" by the project's S3 access keys, over the queue service. A key's project is its account:
// the queues of another project do not exist for it.
// Here: what an action is given and what it answers; routes.cc reads the protocols, params.h the
// parameters, actions.cc does the work.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "api/services.h"
#include "api/sqs/receive_attempts.h"
#include "auth/access_keys.h"
#include "sqs/errors.h"
#include "sqs/queue_attributes.h"

namespace tf::api {

struct SqsApi {
  explicit SqsApi(Services& s) : services(s), keys(s.store.access_keys(), s.clock) {}

  Services& services;
  auth::AccessKeys keys;
  ReceiveAttempts receive_attempts;  // FIFO receives' ReceiveRequestAttemptId
};

// One request, once its signature checked out.
struct SqsCall {
  SqsApi& api;
  http::Request& request;
  std::string action;       // "SendMessage"
  nlohmann::json params;    // in the JSON protocol's shapes (sqs/query_protocol.h)
  std::string project_id;   // the signing key's
  sqs::QueueNaming naming;  // the project's account, the region the request was signed for
  std::string base_url;     // "http://HOST:PORT", from the Host header: queue URLs start so
  std::string path_url;     // base_url + the request's path when that is not "/": a queue URL

  Services& s() { return api.services; }
};

using SqsResult = sqs::Outcome<nlohmann::json>;

// The message move tasks (move_tasks.cc).
awaitable<SqsResult> StartMessageMoveTask(SqsCall& call);
awaitable<SqsResult> ListMessageMoveTasks(SqsCall& call);
awaitable<SqsResult> CancelMessageMoveTask(SqsCall& call);

// Runs call.action; an action this server does not have is answered as SQS answers one it does
// not know (InvalidAction), or as UnsupportedOperation where SQS has it and this server does not.
awaitable<SqsResult> RunSqsAction(SqsCall& call);

}  // namespace tf::api
