// How SQS names a project's queues: the account id (12 digits, derived from the project, so that
// a project's queue URLs and ARNs stay the same across restarts and servers), queue URLs
// (http://HOST:PORT/ACCOUNT/QUEUE) and ARNs (arn:aws:sqs:REGION:ACCOUNT:QUEUE).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace tf::sqs {

// The 12-digit account id of a project.
std::string AccountIdOf(std::string_view project_id);

// "http://HOST:PORT" + "/" + account + "/" + queue.
std::string QueueUrl(std::string_view base_url, std::string_view account, std::string_view queue);
std::string QueueArn(std::string_view region, std::string_view account, std::string_view queue);

// The queue a queue URL names, for a caller of `account`: its last path segment. A URL of
// another account's queue is kNotFound (that queue does not exist for this caller); a URL with
// no queue name kInvalidArgument. A bare queue name is taken as it is (as SQS takes it).
Result<std::string> QueueNameFromUrl(std::string_view url, std::string_view account);
// The queue an SQS ARN names, with the same rules for the account.
Result<std::string> QueueNameFromArn(std::string_view arn, std::string_view account);

}  // namespace tf::sqs
