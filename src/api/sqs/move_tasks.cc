// SQS's message move tasks (the dead-letter queue redrive of its console and SDKs) over the queue
// service's redrive. A task moves every message of its dead-letter queue back to where each came
// from, or to DestinationArn, before StartMessageMoveTask answers: it is never seen RUNNING, and
// MaxNumberOfMessagesPerSecond is kept and not applied. Each task is a document in the store (kind
// "sqs-move-task", named by its handle), so that ListMessageMoveTasks answers after a restart and
// on every server; the last kKeptTasks of each source queue are kept.
#include <algorithm>

#include "api/sqs/params.h"
#include "api/sqs/sqs_api.h"
#include "base/crypto.h"
#include "sqs/names.h"

namespace tf::api {
namespace {

using Json = nlohmann::json;
namespace p = sqs_params;

constexpr const char* kMoveTaskKind = "sqs-move-task";
constexpr size_t kKeptTasks = 10;

sqs::Error ResourceNotFound(std::string message) {
  return sqs::MakeError("ResourceNotFoundException", std::move(message));
}

// The queue an ARN parameter names, for the caller's account.
sqs::Outcome<std::string> QueueOfArn(SqsCall& call, const char* parameter, bool required) {
  auto arn = p::String(call.params, parameter);
  if (!arn.ok()) return arn.error();
  if (!arn->has_value() || (*arn)->empty()) {
    if (required) return sqs::MissingParameter(parameter);
    return std::string();
  }
  auto name = sqs::QueueNameFromArn(**arn, call.naming.account);
  if (!name.ok()) {
    if (name.status().code() == StatusCode::kNotFound) {
      return ResourceNotFound("The resource that you specified for the " + std::string(parameter) +
                              " parameter doesn't exist.");
    }
    return sqs::InvalidParameterValue(std::string(parameter) + ": " + name.status().message());
  }
  return *name;
}

// The project's tasks of `source`, the latest first.
Result<std::vector<std::pair<store::DocumentRecord, Json>>> TasksOf(Services& s,
                                                                    const std::string& project,
                                                                    const std::string& source) {
  TF_ASSIGN_OR_RETURN(auto records, s.store.documents().ListDocuments(kMoveTaskKind, project));
  std::vector<std::pair<store::DocumentRecord, Json>> out;
  for (auto& r : records) {
    Json doc = Json::parse(r.doc_json, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || doc.value("source", "") != source) continue;
    out.emplace_back(std::move(r), std::move(doc));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first.created_at != b.first.created_at ? a.first.created_at > b.first.created_at
                                                    : a.first.id > b.first.id;
  });
  return out;
}

Json EntryJson(SqsCall& call, const store::DocumentRecord& r, const Json& doc) {
  Json out = {
      {"Status", r.state},
      {"SourceArn",
       sqs::QueueArn(call.naming.region, call.naming.account, doc.value("source", ""))},
      {"ApproximateNumberOfMessagesMoved", doc.value("moved", int64_t{0})},
      {"ApproximateNumberOfMessagesToMove", doc.value("to_move", int64_t{0})},
      {"StartedTimestamp", r.created_at},
  };
  if (!doc.value("destination", "").empty()) {
    out["DestinationArn"] =
        sqs::QueueArn(call.naming.region, call.naming.account, doc.value("destination", ""));
  }
  if (doc.contains("rate")) out["MaxNumberOfMessagesPerSecond"] = doc["rate"];
  if (!doc.value("failure", "").empty()) out["FailureReason"] = doc["failure"];
  return out;
}

}  // namespace

awaitable<SqsResult> StartMessageMoveTask(SqsCall& call) {
  auto source = QueueOfArn(call, "SourceArn", /*required=*/true);
  if (!source.ok()) co_return source.error();
  auto destination = QueueOfArn(call, "DestinationArn", /*required=*/false);
  if (!destination.ok()) co_return destination.error();
  auto rate = p::Integer(call.params, "MaxNumberOfMessagesPerSecond");
  if (!rate.ok()) co_return rate.error();
  if (rate->has_value() && (**rate < 1 || **rate > 500)) {
    co_return sqs::InvalidParameterValue(
        "MaxNumberOfMessagesPerSecond must be from 1 to 500, not " + std::to_string(**rate));
  }
  std::optional<sqs::Error> refused;
  auto task = co_await RunBlocking(call.s().pool, [&]() -> Result<store::DocumentRecord> {
    queues::QueueService& queues = call.s().queues;
    TF_ASSIGN_OR_RETURN(queues::QueueInfo info, queues.DescribeQueue(call.project_id, *source));
    TF_ASSIGN_OR_RETURN(auto all, queues.ListQueues(call.project_id, ""));
    const bool dead_letter = std::any_of(all.begin(), all.end(), [&](const store::Queue& q) {
      return q.config.dead_letter_queue == *source;
    });
    if (!dead_letter) {
      refused = sqs::InvalidParameterValue(
          "Source queue must be configured as a Dead Letter "
          "Queue: no queue's RedrivePolicy names '" +
          *source + "'.");
      return store::DocumentRecord{};
    }
    if (!destination->empty()) {
      TF_RETURN_IF_ERROR(queues.Lookup(call.project_id, *destination).status());
    }
    Json doc = {
        {"source", *source}, {"destination", *destination}, {"to_move", info.counts.visible}};
    if (rate->has_value()) doc["rate"] = **rate;
    auto moved = queues.Redrive(call.project_id, *source, *destination, 0);
    store::DocumentRecord record;
    record.kind = kMoveTaskKind;
    record.id = "smt_" + RandomHex(8);
    record.project_id = call.project_id;
    record.name = record.id;
    record.version = 1;
    record.created_at = record.updated_at = call.s().clock.Now();
    if (moved.ok()) {
      record.state = "COMPLETED";
      doc["moved"] = *moved;
    } else {
      record.state = "FAILED";
      doc["moved"] = 0;
      doc["failure"] = moved.status().message();
    }
    record.doc_json = doc.dump();
    TF_RETURN_IF_ERROR(call.s().store.documents().CreateDocument(record));
    // Older tasks of this source beyond the kept ones are forgotten.
    TF_ASSIGN_OR_RETURN(auto tasks, TasksOf(call.s(), call.project_id, *source));
    for (size_t i = kKeptTasks; i < tasks.size(); ++i) {
      Status forgotten =
          call.s().store.documents().DeleteDocument(tasks[i].first.id, tasks[i].first.version);
      if (!forgotten.ok() && forgotten.code() != StatusCode::kNotFound &&
          forgotten.code() != StatusCode::kAborted) {
        return forgotten;
      }
    }
    if (!moved.ok()) return moved.status();
    return record;
  });
  if (refused) co_return *refused;
  if (!task.ok()) {
    if (task.status().code() == StatusCode::kNotFound) {
      co_return ResourceNotFound("The queue does not exist: " + task.status().message());
    }
    co_return sqs::FromStatus(task.status());
  }
  co_return Json{{"TaskHandle", task->name}};
}

awaitable<SqsResult> ListMessageMoveTasks(SqsCall& call) {
  auto source = QueueOfArn(call, "SourceArn", /*required=*/true);
  if (!source.ok()) co_return source.error();
  auto max = p::Integer(call.params, "MaxResults");
  if (!max.ok()) co_return max.error();
  const int64_t limit = max->value_or(1);
  if (limit < 1 || limit > 10) {
    co_return sqs::InvalidParameterValue("MaxResults must be from 1 to 10, not " +
                                         std::to_string(limit));
  }
  auto tasks = co_await RunBlocking(call.s().pool,
                                    [&] { return TasksOf(call.s(), call.project_id, *source); });
  if (!tasks.ok()) co_return sqs::FromStatus(tasks.status());
  Json results = Json::array();
  for (const auto& [record, doc] : *tasks) {
    if (static_cast<int64_t>(results.size()) == limit) break;
    results.push_back(EntryJson(call, record, doc));
  }
  co_return Json{{"Results", results}};
}

awaitable<SqsResult> CancelMessageMoveTask(SqsCall& call) {
  auto handle = p::RequiredString(call.params, "TaskHandle");
  if (!handle.ok()) co_return handle.error();
  auto task = co_await RunBlocking(call.s().pool, [&] {
    return call.s().store.documents().GetDocument(kMoveTaskKind, call.project_id, *handle);
  });
  if (!task.ok()) {
    if (task.status().code() == StatusCode::kNotFound) {
      co_return ResourceNotFound("No message move task has the handle '" + *handle + "'.");
    }
    co_return sqs::FromStatus(task.status());
  }
  // Tasks end before StartMessageMoveTask answers: there is never one running to cancel.
  co_return ResourceNotFound("The message move task '" + *handle + "' is " + task->state +
                             ", not RUNNING: only a running task can be cancelled.");
}

}  // namespace tf::api
