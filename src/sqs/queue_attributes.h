// Queue attributes as SQS names them (VisibilityTimeout, RedrivePolicy, FifoQueue, ...) against
// the queue service's settings and records.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "queues/settings.h"
#include "sqs/errors.h"
#include "store/records.h"

namespace tf::sqs {

using AttributeMap = std::map<std::string, std::string>;

// What a queue's ARN and its RedrivePolicy's target are made of.
struct QueueNaming {
  std::string region;
  std::string account;
};

// The settings that CreateQueue or SetQueueAttributes give. Unknown names are InvalidAttributeName;
// values out of range or of the wrong form InvalidAttributeValue, naming the attribute. Attributes
// that SQS has and this server keeps without acting on (Policy, the KMS settings, ...) go to
// kept_attributes; FifoQueue only when `creating`.
Outcome<queues::QueueSettings> SettingsFromAttributes(const AttributeMap& attributes,
                                                      const QueueNaming& naming, bool creating);

// The queue service's refusal of settings (which names its own fields: visibility_timeout_seconds)
// as SQS's InvalidAttributeValue, naming the attribute (VisibilityTimeout); other errors as
// FromStatus has them.
Error SettingsError(const Status& status);

// Every attribute of a queue, as GetQueueAttributes answers "All"; `counts` null leaves out the
// approximate numbers of messages.
AttributeMap AttributesOf(const store::Queue& queue, const store::QueueCounts* counts,
                          const QueueNaming& naming);

// The subset `names` asks for ("All" for every one). An unknown name is InvalidAttributeName.
Outcome<AttributeMap> SelectAttributes(const AttributeMap& all,
                                       const std::vector<std::string>& names);

}  // namespace tf::sqs
