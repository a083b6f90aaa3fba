// Messages as users send and receive them: bodies, attributes, receipt handles, and the checks
// SQS makes on each.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "queues/settings.h"
#include "store/records.h"

namespace tf::queues {

struct MessageAttribute {
  std::string data_type;     // "String", "Number" or "Binary", optionally ".custom-label"
  std::string string_value;  // for String and Number
  std::string binary_value;  // for Binary: base64, as sent
  bool operator==(const MessageAttribute&) const = default;
};
using MessageAttributes = std::map<std::string, MessageAttribute>;

struct SendEntry {
  std::string body;
  std::optional<int64_t> delay_seconds;  // standard queues only; default: the queue's delay
  MessageAttributes attributes;
  std::string group_id;          // FIFO: required
  std::string deduplication_id;  // FIFO: required unless content-based deduplication is on
};

struct SendOutcome {
  Status status;  // per message: a batch can fail in part
  std::string message_id;
  std::string body_md5;
  int64_t sequence = 0;
  bool duplicate = false;
};

struct Message {
  std::string message_id;
  std::string receipt_handle;
  std::string body;
  std::string body_md5;
  MessageAttributes attributes;
  int receive_count = 0;
  TimeMs sent_at = 0;
  TimeMs first_received_at = 0;
  std::string group_id;
  std::string deduplication_id;
  int64_t sequence = 0;
};

// SQS's allowed characters: #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF, as UTF-8.
// On failure the message gives the byte offset of the first bad character.
Status ValidateBody(const std::string& body);
// Names: 1-256 of [A-Za-z0-9_.-], no leading/trailing/double '.', not starting "AWS." or "Amazon.".
Status ValidateAttributes(const MessageAttributes& attributes);
// Body plus every attribute's name, type and value: what counts against max_message_bytes.
int64_t MessageSize(const SendEntry& entry);

// Attributes <-> the JSON text kept in the store ("" when there are none).
std::string AttributesToJson(const MessageAttributes& attributes);
MessageAttributes AttributesFromJson(const std::string& json);

// A receipt handle names one receive of one message of one queue:
// "rh2.<queue id>.<sequence>.<receipt>" in hex. Decoding it for another queue than the one it
// was issued for is kInvalidArgument (as SQS's ReceiptHandleIsInvalid), as is anything else
// malformed. Handles of the version before ("rh1.<sequence>.<receipt>", no queue) are still
// read, for any queue.
std::string EncodeReceiptHandle(int64_t queue_id, const store::Receipt& receipt);
Result<store::Receipt> DecodeReceiptHandle(const std::string& handle, int64_t queue_id);

// A random RFC 4122 version-4 UUID.
std::string NewMessageId();

}  // namespace tf::queues
