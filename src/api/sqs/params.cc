#include "api/sqs/params.h"

#include <algorithm>
#include <set>

namespace tf::api::sqs_params {

const Json* Member(const Json& params, const char* name) {
  if (!params.is_object()) return nullptr;
  auto it = params.find(name);
  if (it == params.end() || it->is_null()) return nullptr;
  return &*it;
}

sqs::Outcome<std::optional<std::string>> String(const Json& params, const char* name) {
  const Json* v = Member(params, name);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) {
    return sqs::InvalidParameterValue("The parameter " + std::string(name) + " must be a string.");
  }
  return std::optional<std::string>(v->get<std::string>());
}

sqs::Outcome<std::string> RequiredString(const Json& params, const char* name) {
  auto v = String(params, name);
  if (!v.ok()) return v.error();
  if (!v->has_value() || (*v)->empty()) return sqs::MissingParameter(name);
  return **v;
}

sqs::Outcome<std::optional<int64_t>> Integer(const Json& params, const char* name) {
  const Json* v = Member(params, name);
  if (v == nullptr) return std::optional<int64_t>();
  if (v->is_number_integer()) return std::optional<int64_t>(v->get<int64_t>());
  if (v->is_string()) {
    const std::string& text = v->get_ref<const std::string&>();
    const bool digits = !text.empty() && text.size() <= 12 &&
                        std::all_of(text.begin() + (text[0] == '-' ? 1 : 0), text.end(),
                                    [](char c) { return c >= '0' && c <= '9'; }) &&
                        text != "-";
    if (digits) return std::optional<int64_t>(std::stoll(text));
  }
  return sqs::InvalidParameterValue("Value " + v->dump() + " for parameter " + name +
                                    " is invalid. Reason: it must be an integer.");
}

sqs::Outcome<std::vector<std::string>> Strings(const Json& params, const char* name) {
  std::vector<std::string> out;
  const Json* v = Member(params, name);
  if (v == nullptr) return out;
  if (!v->is_array()) {
    return sqs::InvalidParameterValue("The parameter " + std::string(name) +
                                      " must be a list of strings.");
  }
  for (const Json& item : *v) {
    if (!item.is_string()) {
      return sqs::InvalidParameterValue("The parameter " + std::string(name) +
                                        " must be a list of strings.");
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

sqs::Outcome<std::map<std::string, std::string>> StringMap(const Json& params, const char* name) {
  std::map<std::string, std::string> out;
  const Json* v = Member(params, name);
  if (v == nullptr) return out;
  if (!v->is_object()) {
    return sqs::InvalidParameterValue("The parameter " + std::string(name) +
                                      " must be a map of strings.");
  }
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it.value().is_string()) {
      return sqs::InvalidParameterValue("The value of " + std::string(name) + "." + it.key() +
                                        " must be a string.");
    }
    out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

sqs::Outcome<queues::MessageAttributes> MessageAttributes(const Json& params, const char* name) {
  queues::MessageAttributes out;
  const Json* v = Member(params, name);
  if (v == nullptr) return out;
  if (!v->is_object()) {
    return sqs::InvalidParameterValue("The parameter " + std::string(name) +
                                      " must be a map of message attribute values.");
  }
  for (auto it = v->begin(); it != v->end(); ++it) {
    const std::string where = std::string(name) + "." + it.key();
    const Json& value = it.value();
    if (!value.is_object()) {
      return sqs::InvalidParameterValue(where + " must have a DataType and a value.");
    }
    if (Member(value, "StringListValues") != nullptr ||
        Member(value, "BinaryListValues") != nullptr) {
      return sqs::MakeError("UnsupportedOperation",
                            where +
                                ": StringListValues and BinaryListValues are reserved by SQS "
                                "and not supported.");
    }
    queues::MessageAttribute a;
    auto type = RequiredString(value, "DataType");
    if (!type.ok()) {
      return sqs::InvalidParameterValue("The message attribute '" + it.key() +
                                        "' must contain a non-empty attribute type.");
    }
    a.data_type = *type;
    auto text = String(value, "StringValue");
    if (!text.ok()) return text.error();
    a.string_value = text->value_or("");
    auto binary = String(value, "BinaryValue");
    if (!binary.ok()) return binary.error();
    a.binary_value = binary->value_or("");
    out[it.key()] = std::move(a);
  }
  return out;
}

sqs::Outcome<std::vector<const Json*>> BatchEntries(const Json& params) {
  const Json* entries = Member(params, "Entries");
  if (entries == nullptr || !entries->is_array() || entries->empty()) {
    sqs::Error e =
        sqs::MakeError("EmptyBatchRequest", "There should be at least one entry in the request.");
    e.query_code = "AWS.SimpleQueueService.EmptyBatchRequest";
    return e;
  }
  if (entries->size() > 10) {
    sqs::Error e = sqs::MakeError("TooManyEntriesInBatchRequest",
                                  "Maximum number of entries per request are 10. You have sent " +
                                      std::to_string(entries->size()) + ".");
    e.query_code = "AWS.SimpleQueueService.TooManyEntriesInBatchRequest";
    return e;
  }
  std::vector<const Json*> out;
  std::set<std::string> ids;
  for (const Json& entry : *entries) {
    const Json* id = Member(entry, "Id");
    const bool valid = id != nullptr && id->is_string() &&
                       !id->get_ref<const std::string&>().empty() &&
                       id->get_ref<const std::string&>().size() <= 80 &&
                       std::all_of(id->get_ref<const std::string&>().begin(),
                                   id->get_ref<const std::string&>().end(), [](char c) {
                                     return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                            (c >= '0' && c <= '9') || c == '_' || c == '-';
                                   });
    if (!valid) {
      sqs::Error e = sqs::MakeError(
          "InvalidBatchEntryId",
          "A batch entry id can only contain alphanumeric characters, hyphens and underscores. "
          "It can be at most 80 letters long.");
      e.query_code = "AWS.SimpleQueueService.InvalidBatchEntryId";
      return e;
    }
    if (!ids.insert(id->get<std::string>()).second) {
      sqs::Error e =
          sqs::MakeError("BatchEntryIdsNotDistinct", "Id " + id->get<std::string>() + " repeated.");
      e.query_code = "AWS.SimpleQueueService.BatchEntryIdsNotDistinct";
      return e;
    }
    out.push_back(&entry);
  }
  return out;
}

}  // namespace tf::api::sqs_params
