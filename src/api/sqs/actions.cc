// The SQS actions over the queue service. Each reads its parameters (params.h), finds the queue
// its QueueUrl names for the caller's account, calls the service (on the blocking pool, or
// through queues/async_calls.h and queues/long_poll.h for send, receive and delete) and answers
// in the JSON protocol's shapes, which routes.cc writes as JSON or as XML.
#include <algorithm>

#include "api/sqs/params.h"
#include "api/sqs/sqs_api.h"
#include "base/crypto.h"
#include "queues/async_calls.h"
#include "queues/long_poll.h"
#include "sqs/message_md5.h"
#include "sqs/names.h"

namespace tf::api {
namespace {

using Json = nlohmann::json;
namespace p = sqs_params;

constexpr int64_t kMaxListResults = 1000;

// The queue a request is about: its QueueUrl parameter, else the queue its path names.
sqs::Outcome<std::string> QueueOf(SqsCall& call) {
  auto url = p::String(call.params, "QueueUrl");
  if (!url.ok()) return url.error();
  if (!url->has_value() || (*url)->empty()) {
    if (call.path_url.empty()) return sqs::MissingParameter("QueueUrl");
    *url = call.path_url;  // the Query protocol's requests may be sent to the queue's URL
  }
  auto name = sqs::QueueNameFromUrl(**url, call.naming.account);
  if (!name.ok()) {
    if (name.status().code() == StatusCode::kNotFound) return sqs::QueueDoesNotExist(**url);
    return sqs::MakeError("InvalidAddress", "The address " + **url +
                                                " is not valid for this "
                                                "endpoint: " +
                                                name.status().message());
  }
  return *name;
}

// A service error about `queue`, named as SQS names it.
sqs::Error QueueError(const Status& status, const std::string& queue) {
  if (status.code() == StatusCode::kNotFound) return sqs::QueueDoesNotExist(queue);
  return sqs::FromStatus(status);
}

std::string UrlOf(SqsCall& call, const std::string& queue) {
  return sqs::QueueUrl(call.base_url, call.naming.account, queue);
}

// A page of names after `token` (the last name of the page before, base64), at most `max`.
struct Page {
  std::vector<std::string> names;
  std::string next_token;
};
sqs::Outcome<Page> PageOf(std::vector<std::string> names, const Json& params) {
  auto max = p::Integer(params, "MaxResults");
  if (!max.ok()) return max.error();
  if (max->has_value() && (**max < 1 || **max > kMaxListResults)) {
    return sqs::InvalidParameterValue("Value " + std::to_string(**max) +
                                      " for parameter MaxResults is invalid. Reason: it must be "
                                      "from 1 to 1000.");
  }
  auto token = p::String(params, "NextToken");
  if (!token.ok()) return token.error();
  std::sort(names.begin(), names.end());
  auto from = names.begin();
  if (token->has_value() && !(*token)->empty()) {
    auto after = Base64Decode(**token);
    if (!after) return sqs::InvalidParameterValue("Invalid NextToken value.");
    from = std::upper_bound(names.begin(), names.end(), *after);
  }
  Page page;
  const int64_t limit = max->value_or(kMaxListResults);
  for (auto it = from; it != names.end(); ++it) {
    if (static_cast<int64_t>(page.names.size()) == limit) {
      // Only a caller that gave MaxResults pages (as SQS has it).
      if (max->has_value()) page.next_token = Base64Encode(page.names.back());
      break;
    }
    page.names.push_back(*it);
  }
  return page;
}

Json AttributesJson(const queues::MessageAttributes& attributes) {
  Json out = Json::object();
  for (const auto& [name, a] : attributes) {
    Json v = {{"DataType", a.data_type}};
    if (a.data_type.rfind("Binary", 0) == 0) {
      v["BinaryValue"] = a.binary_value;
    } else {
      v["StringValue"] = a.string_value;
    }
    out[name] = std::move(v);
  }
  return out;
}

// Whether a ReceiveMessage's MessageAttributeNames asks for `name`: "All", ".*", the name, or
// "prefix.*" for a name under that prefix.
bool Wanted(const std::vector<std::string>& patterns, const std::string& name) {
  for (const std::string& pattern : patterns) {
    if (pattern == "All" || pattern == ".*" || pattern == name) return true;
    if (pattern.size() > 2 && pattern.ends_with(".*") &&
        name.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0) {
      return true;
    }
  }
  return false;
}

constexpr std::string_view kSystemAttributes[] = {
    "SenderId",
    "SentTimestamp",
    "ApproximateReceiveCount",
    "ApproximateFirstReceiveTimestamp",
    "SequenceNumber",
    "MessageDeduplicationId",
    "MessageGroupId",
    "AWSTraceHeader",
};

Json MessageJson(const queues::Message& m, const std::vector<std::string>& system,
                 const std::vector<std::string>& attribute_names, const std::string& account) {
  Json out = {{"MessageId", m.message_id},
              {"ReceiptHandle", m.receipt_handle},
              {"MD5OfBody", m.body_md5},
              {"Body", m.body}};
  const bool all = std::find(system.begin(), system.end(), "All") != system.end();
  auto asked = [&](std::string_view name) {
    return all || std::find(system.begin(), system.end(), name) != system.end();
  };
  Json attributes = Json::object();
  if (asked("SenderId")) attributes["SenderId"] = account;
  if (asked("SentTimestamp")) attributes["SentTimestamp"] = std::to_string(m.sent_at);
  if (asked("ApproximateReceiveCount")) {
    attributes["ApproximateReceiveCount"] = std::to_string(m.receive_count);
  }
  if (asked("ApproximateFirstReceiveTimestamp")) {
    attributes["ApproximateFirstReceiveTimestamp"] = std::to_string(m.first_received_at);
  }
  if (!m.group_id.empty()) {
    if (asked("SequenceNumber")) attributes["SequenceNumber"] = std::to_string(m.sequence);
    if (asked("MessageGroupId")) attributes["MessageGroupId"] = m.group_id;
    if (asked("MessageDeduplicationId") && !m.deduplication_id.empty()) {
      attributes["MessageDeduplicationId"] = m.deduplication_id;
    }
  }
  if (!attributes.empty()) out["Attributes"] = std::move(attributes);
  queues::MessageAttributes returned;
  for (const auto& [name, a] : m.attributes) {
    if (Wanted(attribute_names, name)) returned[name] = a;
  }
  if (!returned.empty()) {
    out["MessageAttributes"] = AttributesJson(returned);
    out["MD5OfMessageAttributes"] = sqs::MessageAttributesMd5(returned);
  }
  return out;
}

// One message to send, from SendMessage's parameters or a SendMessageBatch entry.
sqs::Outcome<queues::SendEntry> SendEntryOf(const Json& params) {
  queues::SendEntry e;
  auto body = p::String(params, "MessageBody");
  if (!body.ok()) return body.error();
  if (!body->has_value() || (*body)->empty()) return sqs::MissingParameter("MessageBody");
  e.body = **body;
  auto delay = p::Integer(params, "DelaySeconds");
  if (!delay.ok()) return delay.error();
  e.delay_seconds = *delay;
  auto attributes = p::MessageAttributes(params, "MessageAttributes");
  if (!attributes.ok()) return attributes.error();
  e.attributes = std::move(*attributes);
  if (p::Member(params, "MessageSystemAttributes") != nullptr) {
    return sqs::MakeError("UnsupportedOperation",
                          "MessageSystemAttributes (AWSTraceHeader) are not supported by this "
                          "server.");
  }
  auto group = p::String(params, "MessageGroupId");
  if (!group.ok()) return group.error();
  e.group_id = group->value_or("");
  auto dedup = p::String(params, "MessageDeduplicationId");
  if (!dedup.ok()) return dedup.error();
  e.deduplication_id = dedup->value_or("");
  return e;
}

Json SentJson(const queues::SendOutcome& sent, const queues::SendEntry& entry) {
  Json out = {{"MessageId", sent.message_id}, {"MD5OfMessageBody", sent.body_md5}};
  if (!entry.attributes.empty()) {
    out["MD5OfMessageAttributes"] = sqs::MessageAttributesMd5(entry.attributes);
  }
  if (!entry.group_id.empty()) out["SequenceNumber"] = std::to_string(sent.sequence);
  return out;
}

Json FailedEntry(const std::string& id, const sqs::Error& error) {
  return {{"Id", id},
          {"SenderFault", error.sender_fault},
          {"Code", error.query_code},
          {"Message", error.message}};
}

// --- The actions.

awaitable<SqsResult> CreateQueue(SqsCall& call) {
  auto name = p::RequiredString(call.params, "QueueName");
  if (!name.ok()) co_return name.error();
  auto attributes = p::StringMap(call.params, "Attributes");
  if (!attributes.ok()) co_return attributes.error();
  auto settings = sqs::SettingsFromAttributes(*attributes, call.naming, /*creating=*/true);
  if (!settings.ok()) co_return settings.error();
  // The JSON protocol calls CreateQueue's tags "tags"; the Query protocol's Tag.N arrive as Tags.
  auto tags = p::StringMap(call.params, p::Member(call.params, "tags") ? "tags" : "Tags");
  if (!tags.ok()) co_return tags.error();
  if (!tags->empty()) settings->tags = *tags;
  if (settings->fifo.value_or(false) != name->ends_with(".fifo")) {
    co_return sqs::InvalidParameterValue(
        settings->fifo.value_or(false)
            ? "The name of a FIFO queue can only include alphanumeric characters, hyphens, or "
              "underscores, must end with .fifo suffix and be 1 to 80 in length."
            : "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in "
              "length (a queue whose name ends with .fifo needs the attribute FifoQueue=true)");
  }
  auto created = co_await RunBlocking(call.s().pool, [&] {
    return call.s().queues.CreateQueue(call.project_id, *name, *settings);
  });
  if (!created.ok()) {
    if (created.status().code() == StatusCode::kInvalidArgument &&
        created.status().message().find("name") == std::string::npos) {
      co_return sqs::SettingsError(created.status());
    }
    co_return QueueError(created.status(), *name);
  }
  co_return Json{{"QueueUrl", UrlOf(call, *name)}};
}

awaitable<SqsResult> GetQueueUrl(SqsCall& call) {
  auto name = p::RequiredString(call.params, "QueueName");
  if (!name.ok()) co_return name.error();
  auto owner = p::String(call.params, "QueueOwnerAWSAccountId");
  if (!owner.ok()) co_return owner.error();
  if (owner->has_value() && **owner != call.naming.account) {
    co_return sqs::QueueDoesNotExist(*name);
  }
  auto q = co_await RunBlocking(call.s().pool,
                                [&] { return call.s().queues.Lookup(call.project_id, *name); });
  if (!q.ok()) co_return QueueError(q.status(), *name);
  co_return Json{{"QueueUrl", UrlOf(call, *name)}};
}

awaitable<SqsResult> ListQueues(SqsCall& call) {
  auto prefix = p::String(call.params, "QueueNamePrefix");
  if (!prefix.ok()) co_return prefix.error();
  auto list = co_await RunBlocking(call.s().pool, [&] {
    return call.s().queues.ListQueues(call.project_id, prefix->value_or(""));
  });
  if (!list.ok()) co_return sqs::FromStatus(list.status());
  std::vector<std::string> names;
  for (const store::Queue& q : *list) names.push_back(q.name);
  auto page = PageOf(std::move(names), call.params);
  if (!page.ok()) co_return page.error();
  Json out = Json::object();
  if (!page->names.empty()) {
    Json urls = Json::array();
    for (const std::string& name : page->names) urls.push_back(UrlOf(call, name));
    out["QueueUrls"] = std::move(urls);
  }
  if (!page->next_token.empty()) out["NextToken"] = page->next_token;
  co_return out;
}

awaitable<SqsResult> DeleteQueue(SqsCall& call) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  Status st = co_await RunBlocking(
      call.s().pool, [&] { return call.s().queues.DeleteQueue(call.project_id, *queue); });
  if (!st.ok()) co_return QueueError(st, *queue);
  co_return Json::object();
}

awaitable<SqsResult> GetQueueAttributes(SqsCall& call) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  auto names = p::Strings(call.params, "AttributeNames");
  if (!names.ok()) co_return names.error();
  auto info = co_await RunBlocking(
      call.s().pool, [&] { return call.s().queues.DescribeQueue(call.project_id, *queue); });
  if (!info.ok()) co_return QueueError(info.status(), *queue);
  auto selected =
      sqs::SelectAttributes(sqs::AttributesOf(info->queue, &info->counts, call.naming), *names);
  if (!selected.ok()) co_return selected.error();
  Json out = Json::object();
  if (!selected->empty()) out["Attributes"] = *selected;
  co_return out;
}

awaitable<SqsResult> SetQueueAttributes(SqsCall& call) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  auto attributes = p::StringMap(call.params, "Attributes");
  if (!attributes.ok()) co_return attributes.error();
  auto settings = sqs::SettingsFromAttributes(*attributes, call.naming, /*creating=*/false);
  if (!settings.ok()) co_return settings.error();
  auto updated = co_await RunBlocking(call.s().pool, [&] {
    return call.s().queues.UpdateQueue(call.project_id, *queue, *settings);
  });
  if (!updated.ok()) {
    if (updated.status().code() == StatusCode::kInvalidArgument) {
      co_return sqs::SettingsError(updated.status());
    }
    co_return QueueError(updated.status(), *queue);
  }
  co_return Json::object();
}

awaitable<SqsResult> PurgeQueue(SqsCall& call) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  auto purged = co_await RunBlocking(
      call.s().pool, [&] { return call.s().queues.Purge(call.project_id, *queue); });
  if (!purged.ok()) co_return QueueError(purged.status(), *queue);
  co_return Json::object();
}

awaitable<SqsResult> SendMessage(SqsCall& call) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  auto entry = SendEntryOf(call.params);
  if (!entry.ok()) co_return entry.error();
  std::vector<queues::SendEntry> entries{*entry};
  auto sent =
      co_await queues::SendAsync(call.s().queues, call.s().pool, call.project_id, *queue, entries);
  if (!sent.ok()) co_return QueueError(sent.status(), *queue);
  if (!(*sent)[0].status.ok()) co_return sqs::FromStatus((*sent)[0].status);
  co_return SentJson((*sent)[0], entries[0]);
}

awaitable<SqsResult> SendMessageBatch(SqsCall& call) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  auto items = p::BatchEntries(call.params);
  if (!items.ok()) co_return items.error();
  Json failed = Json::array();
  std::vector<queues::SendEntry> entries;
  std::vector<std::string> ids;
  for (const Json* item : *items) {
    const std::string id = (*item)["Id"].get<std::string>();
    auto entry = SendEntryOf(*item);
    if (!entry.ok()) {
      failed.push_back(FailedEntry(id, entry.error()));
      continue;
    }
    entries.push_back(std::move(*entry));
    ids.push_back(id);
  }
  Json successful = Json::array();
  if (!entries.empty()) {
    auto sent = co_await queues::SendAsync(call.s().queues, call.s().pool, call.project_id, *queue,
                                           entries);
    if (!sent.ok()) {
      if (sent.status().code() == StatusCode::kInvalidArgument &&
          sent.status().message().find("batch") != std::string::npos) {
        sqs::Error e = sqs::MakeError("BatchRequestTooLong", sent.status().message());
        e.query_code = "AWS.SimpleQueueService.BatchRequestTooLong";
        co_return e;
      }
      co_return QueueError(sent.status(), *queue);
    }
    for (size_t i = 0; i < sent->size(); ++i) {
      const queues::SendOutcome& outcome = (*sent)[i];
      if (!outcome.status.ok()) {
        failed.push_back(FailedEntry(ids[i], sqs::FromStatus(outcome.status)));
        continue;
      }
      Json ok = SentJson(outcome, entries[i]);
      ok["Id"] = ids[i];
      successful.push_back(std::move(ok));
    }
  }
  co_return Json{{"Successful", successful}, {"Failed", failed}};
}

awaitable<SqsResult> ReceiveMessage(SqsCall& call) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  queues::LongPollParams params;
  auto max = p::Integer(call.params, "MaxNumberOfMessages");
  if (!max.ok()) co_return max.error();
  params.receive.max_messages = max->value_or(1);
  if (params.receive.max_messages < 1 || params.receive.max_messages > 10) {
    co_return sqs::InvalidParameterValue(
        "Value " + std::to_string(params.receive.max_messages) +
        " for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if "
        "provided.");
  }
  auto visibility = p::Integer(call.params, "VisibilityTimeout");
  if (!visibility.ok()) co_return visibility.error();
  params.receive.visibility_timeout_seconds = *visibility;
  auto wait = p::Integer(call.params, "WaitTimeSeconds");
  if (!wait.ok()) co_return wait.error();
  params.wait_seconds = *wait;
  // Both names of the system attributes to return: AttributeNames (the older) and
  // MessageSystemAttributeNames.
  auto system = p::Strings(call.params, "AttributeNames");
  if (!system.ok()) co_return system.error();
  auto system_new = p::Strings(call.params, "MessageSystemAttributeNames");
  if (!system_new.ok()) co_return system_new.error();
  system->insert(system->end(), system_new->begin(), system_new->end());
  for (const std::string& name : *system) {
    const bool known =
        name == "All" || std::find(std::begin(kSystemAttributes), std::end(kSystemAttributes),
                                   name) != std::end(kSystemAttributes);
    if (!known) co_return sqs::MakeError("InvalidAttributeName", "Unknown Attribute " + name + ".");
  }
  auto names = p::Strings(call.params, "MessageAttributeNames");
  if (!names.ok()) co_return names.error();
  // A FIFO receive retried with its attempt id gets the first one's answer (receive_attempts.h);
  // standard queues ignore the id, as SQS does.
  auto attempt = p::String(call.params, "ReceiveRequestAttemptId");
  if (!attempt.ok()) co_return attempt.error();
  const std::string attempt_id = queue->ends_with(".fifo") ? attempt->value_or("") : "";
  if (!attempt_id.empty()) {
    const bool valid =
        attempt_id.size() <= 128 && std::all_of(attempt_id.begin(), attempt_id.end(),
                                                [](char c) { return c >= '!' && c <= '~'; });
    if (!valid) {
      co_return sqs::InvalidParameterValue(
          "ReceiveRequestAttemptId must be 1 to 128 characters of letters, digits and "
          "punctuation.");
    }
    if (auto earlier = call.api.receive_attempts.Find(call.project_id, *queue, attempt_id,
                                                      call.s().clock.Now())) {
      co_return *earlier;
    }
  }
  auto got = co_await queues::ReceiveWithWait(call.s().queues, call.s().wakeups, call.s().pool,
                                              call.project_id, *queue, params);
  if (!got.ok()) co_return QueueError(got.status(), *queue);
  Json messages = Json::array();
  for (const queues::Message& m : *got) {
    messages.push_back(MessageJson(m, *system, *names, call.naming.account));
  }
  Json out = Json::object();
  if (!messages.empty()) out["Messages"] = std::move(messages);
  if (!attempt_id.empty()) {
    call.api.receive_attempts.Keep(call.project_id, *queue, attempt_id, out, call.s().clock.Now());
  }
  co_return out;
}

// A receipt's deletion as SQS reports it: a stale receipt (the message was received again since)
// succeeds and deletes nothing, as SQS documents; a malformed one, or one of another queue, is
// ReceiptHandleIsInvalid.
std::optional<sqs::Error> DeleteError(const Status& status, const std::string& handle) {
  if (status.ok() || status.code() == StatusCode::kAborted) return std::nullopt;
  if (status.code() == StatusCode::kInvalidArgument) {
    return sqs::ReceiptHandleIsInvalid("The input receipt handle \"" + handle.substr(0, 200) +
                                       "\" is not a valid receipt handle.");
  }
  return sqs::FromStatus(status);
}

awaitable<SqsResult> DeleteMessage(SqsCall& call) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  auto handle = p::RequiredString(call.params, "ReceiptHandle");
  if (!handle.ok()) co_return handle.error();
  std::vector<std::string> handles{*handle};
  auto results = co_await queues::DeleteAsync(call.s().queues, call.s().pool, call.project_id,
                                              *queue, handles);
  if (!results.ok()) co_return QueueError(results.status(), *queue);
  if (auto bad = DeleteError((*results)[0], *handle)) co_return *bad;
  co_return Json::object();
}

awaitable<SqsResult> DeleteMessageBatch(SqsCall& call) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  auto items = p::BatchEntries(call.params);
  if (!items.ok()) co_return items.error();
  Json failed = Json::array();
  std::vector<std::string> handles;
  std::vector<std::string> ids;
  for (const Json* item : *items) {
    const std::string id = (*item)["Id"].get<std::string>();
    auto handle = p::RequiredString(*item, "ReceiptHandle");
    if (!handle.ok()) {
      failed.push_back(FailedEntry(id, handle.error()));
      continue;
    }
    handles.push_back(*handle);
    ids.push_back(id);
  }
  Json successful = Json::array();
  if (!handles.empty()) {
    auto results = co_await queues::DeleteAsync(call.s().queues, call.s().pool, call.project_id,
                                                *queue, handles);
    if (!results.ok()) co_return QueueError(results.status(), *queue);
    for (size_t i = 0; i < results->size(); ++i) {
      if (auto bad = DeleteError((*results)[i], handles[i])) {
        failed.push_back(FailedEntry(ids[i], *bad));
      } else {
        successful.push_back(Json{{"Id", ids[i]}});
      }
    }
  }
  co_return Json{{"Successful", successful}, {"Failed", failed}};
}

std::optional<sqs::Error> VisibilityError(const Status& status, const std::string& handle) {
  switch (status.code()) {
    case StatusCode::kOk:
      return std::nullopt;
    case StatusCode::kInvalidArgument:
      if (status.message().find("visibility") != std::string::npos) {
        return sqs::InvalidParameterValue(status.message());
      }
      return sqs::ReceiptHandleIsInvalid("The input receipt handle \"" + handle.substr(0, 200) +
                                         "\" is not a valid receipt handle.");
    case StatusCode::kFailedPrecondition: {
      sqs::Error e = sqs::MakeError("MessageNotInflight", "The message is not in flight.");
      e.query_code = "AWS.SimpleQueueService.MessageNotInflight";
      return e;
    }
    case StatusCode::kAborted:
    case StatusCode::kNotFound:
      return sqs::InvalidParameterValue(
          "Value " + handle.substr(0, 200) +
          " for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not "
          "available for visibility timeout change.");
    default:
      return sqs::FromStatus(status);
  }
}

awaitable<SqsResult> ChangeVisibility(SqsCall& call, bool batch) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  std::vector<const Json*> items{&call.params};
  if (batch) {
    auto entries = p::BatchEntries(call.params);
    if (!entries.ok()) co_return entries.error();
    items = *entries;
  }
  Json failed = Json::array();
  std::vector<queues::VisibilityRequest> changes;
  std::vector<std::string> ids;
  for (const Json* item : items) {
    const std::string id = batch ? (*item)["Id"].get<std::string>() : "";
    auto handle = p::RequiredString(*item, "ReceiptHandle");
    auto timeout = p::Integer(*item, "VisibilityTimeout");
    std::optional<sqs::Error> bad;
    if (!handle.ok()) bad = handle.error();
    if (!bad && !timeout.ok()) bad = timeout.error();
    if (!bad && !timeout->has_value()) bad = sqs::MissingParameter("VisibilityTimeout");
    if (bad) {
      if (!batch) co_return *bad;
      failed.push_back(FailedEntry(id, *bad));
      continue;
    }
    changes.push_back({*handle, **timeout});
    ids.push_back(id);
  }
  Json successful = Json::array();
  if (!changes.empty()) {
    auto results = co_await RunBlocking(call.s().pool, [&] {
      return call.s().queues.ChangeVisibility(call.project_id, *queue, changes);
    });
    if (!results.ok()) co_return QueueError(results.status(), *queue);
    for (size_t i = 0; i < results->size(); ++i) {
      auto bad = VisibilityError((*results)[i], changes[i].receipt_handle);
      if (!batch) {
        if (bad) co_return *bad;
        co_return Json::object();
      }
      if (bad) {
        failed.push_back(FailedEntry(ids[i], *bad));
      } else {
        successful.push_back(Json{{"Id", ids[i]}});
      }
    }
  }
  co_return Json{{"Successful", successful}, {"Failed", failed}};
}

// Reads the queue, changes its tags with `change`, writes them back.
template <typename Change>
awaitable<SqsResult> ChangeTags(SqsCall& call, Change change) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  std::optional<sqs::Error> bad;
  auto updated = co_await RunBlocking(call.s().pool, [&]() -> Result<store::Queue> {
    TF_ASSIGN_OR_RETURN(queues::QueueInfo info,
                        call.s().queues.DescribeQueue(call.project_id, *queue));
    queues::QueueSettings settings;
    settings.tags = info.queue.config.tags;
    bad = change(*settings.tags);
    if (bad) return info.queue;
    return call.s().queues.UpdateQueue(call.project_id, *queue, settings);
  });
  if (bad) co_return *bad;
  if (!updated.ok()) co_return QueueError(updated.status(), *queue);
  co_return Json::object();
}

awaitable<SqsResult> TagQueue(SqsCall& call) {
  auto tags = p::StringMap(call.params, "Tags");
  if (!tags.ok()) co_return tags.error();
  if (tags->empty()) co_return sqs::MissingParameter("Tags");
  co_return co_await ChangeTags(
      call, [&](std::map<std::string, std::string>& current) -> std::optional<sqs::Error> {
        for (const auto& [key, value] : *tags) current[key] = value;
        return std::nullopt;
      });
}

awaitable<SqsResult> UntagQueue(SqsCall& call) {
  auto keys = p::Strings(call.params, "TagKeys");
  if (!keys.ok()) co_return keys.error();
  if (keys->empty()) co_return sqs::MissingParameter("TagKeys");
  co_return co_await ChangeTags(
      call, [&](std::map<std::string, std::string>& current) -> std::optional<sqs::Error> {
        for (const std::string& key : *keys) current.erase(key);
        return std::nullopt;
      });
}

awaitable<SqsResult> ListQueueTags(SqsCall& call) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  auto q = co_await RunBlocking(
      call.s().pool, [&] { return call.s().queues.DescribeQueue(call.project_id, *queue); });
  if (!q.ok()) co_return QueueError(q.status(), *queue);
  Json out = Json::object();
  if (!q->queue.config.tags.empty()) out["Tags"] = q->queue.config.tags;
  co_return out;
}

awaitable<SqsResult> ListDeadLetterSourceQueues(SqsCall& call) {
  auto queue = QueueOf(call);
  if (!queue.ok()) co_return queue.error();
  auto list = co_await RunBlocking(call.s().pool, [&]() -> Result<std::vector<store::Queue>> {
    TF_RETURN_IF_ERROR(call.s().queues.Lookup(call.project_id, *queue).status());
    return call.s().queues.ListQueues(call.project_id, "");
  });
  if (!list.ok()) co_return QueueError(list.status(), *queue);
  std::vector<std::string> sources;
  for (const store::Queue& q : *list) {
    if (q.config.dead_letter_queue == *queue) sources.push_back(q.name);
  }
  auto page = PageOf(std::move(sources), call.params);
  if (!page.ok()) co_return page.error();
  Json urls = Json::array();
  for (const std::string& name : page->names) urls.push_back(UrlOf(call, name));
  Json out = {{"queueUrls", urls}};
  if (!page->next_token.empty()) out["NextToken"] = page->next_token;
  co_return out;
}

// Actions SQS has that this server does not (docs/sqs-api.md says why).
constexpr std::string_view kUnsupported[] = {
    "AddPermission",        "RemovePermission",      "StartMessageMoveTask",
    "ListMessageMoveTasks", "CancelMessageMoveTask",
};

}  // namespace

awaitable<SqsResult> RunSqsAction(SqsCall& call) {
  const std::string& a = call.action;
  if (a == "CreateQueue") co_return co_await CreateQueue(call);
  if (a == "GetQueueUrl") co_return co_await GetQueueUrl(call);
  if (a == "ListQueues") co_return co_await ListQueues(call);
  if (a == "DeleteQueue") co_return co_await DeleteQueue(call);
  if (a == "GetQueueAttributes") co_return co_await GetQueueAttributes(call);
  if (a == "SetQueueAttributes") co_return co_await SetQueueAttributes(call);
  if (a == "PurgeQueue") co_return co_await PurgeQueue(call);
  if (a == "SendMessage") co_return co_await SendMessage(call);
  if (a == "SendMessageBatch") co_return co_await SendMessageBatch(call);
  if (a == "ReceiveMessage") co_return co_await ReceiveMessage(call);
  if (a == "DeleteMessage") co_return co_await DeleteMessage(call);
  if (a == "DeleteMessageBatch") co_return co_await DeleteMessageBatch(call);
  if (a == "ChangeMessageVisibility") co_return co_await ChangeVisibility(call, /*batch=*/false);
  if (a == "ChangeMessageVisibilityBatch") {
    co_return co_await ChangeVisibility(call, /*batch=*/true);
  }
  if (a == "TagQueue") co_return co_await TagQueue(call);
  if (a == "UntagQueue") co_return co_await UntagQueue(call);
  if (a == "ListQueueTags") co_return co_await ListQueueTags(call);
  if (a == "ListDeadLetterSourceQueues") co_return co_await ListDeadLetterSourceQueues(call);
  if (a == "StartMessageMoveTask") co_return co_await StartMessageMoveTask(call);
  if (a == "ListMessageMoveTasks") co_return co_await ListMessageMoveTasks(call);
  if (a == "CancelMessageMoveTask") co_return co_await CancelMessageMoveTask(call);
  for (std::string_view unsupported : kUnsupported) {
    if (a == unsupported) {
      sqs::Error e = sqs::MakeError("UnsupportedOperation",
                                    a + " is not supported by this server (docs/sqs-api.md).");
      e.query_code = "AWS.SimpleQueueService.UnsupportedOperation";
      co_return e;
    }
  }
  co_return sqs::MakeError("InvalidAction", "The action " + a + " is not valid for this endpoint.");
}

}  // namespace tf::api
