#include "sqs/query_protocol.h"

#include <algorithm>
#include <cstdlib>

#include "s3/xml.h"

namespace tf::sqs {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kNamespace = "http://queue.amazonaws.com/doc/2012-11-05/";

// A flattened map in the Query form: its member name, the JSON name, and the names of an entry's
// key and value.
struct MapName {
  std::string_view query;
  std::string_view json;
  std::string_view key;
  std::string_view value;
};
constexpr MapName kMaps[] = {
    {"Attribute", "Attributes", "Name", "Value"},
    {"MessageAttribute", "MessageAttributes", "Name", "Value"},
    {"MessageSystemAttribute", "MessageSystemAttributes", "Name", "Value"},
    {"Tag", "Tags", "Key", "Value"},
};

// A flattened list of scalars: the member name and the JSON name.
struct ListName {
  std::string_view query;
  std::string_view json;
};
constexpr ListName kLists[] = {
    {"AttributeName", "AttributeNames"},
    {"MessageAttributeName", "MessageAttributeNames"},
    {"MessageSystemAttributeName", "MessageSystemAttributeNames"},
    {"TagKey", "TagKeys"},
};

// The actions that answer nothing but their metadata; every other has an <ActionResult>, empty
// or not (clients look for it).
constexpr std::string_view kNoResult[] = {
    "DeleteQueue", "SetQueueAttributes",      "PurgeQueue", "DeleteMessage", "TagQueue",
    "UntagQueue",  "ChangeMessageVisibility",
};

bool IsIndex(std::string_view s) {
  return !s.empty() && s.size() <= 4 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         s[0] != '0';
}

// Places value at the dotted path under `node`; numbered segments become "#N" keys for now.
Status Place(Json& node, std::string_view path, const std::string& value,
             const std::string& whole) {
  Json* at = &node;
  while (true) {
    const size_t dot = path.find('.');
    std::string part(path.substr(0, dot));
    if (part.empty()) return InvalidArgument("parameter '" + whole + "' has an empty part");
    if (IsIndex(part)) part = "#" + part;
    if (!at->is_object()) {
      return InvalidArgument("parameter '" + whole + "' conflicts with another parameter");
    }
    if (dot == std::string_view::npos) {
      if (at->contains(part)) return InvalidArgument("parameter '" + whole + "' is given twice");
      (*at)[part] = value;
      return OkStatus();
    }
    Json& next = (*at)[part];
    if (next.is_null()) next = Json::object();
    at = &next;
    path = path.substr(dot + 1);
  }
}

// Whether every key is "#N"; then the object becomes an array in index order.
Result<Json> Listify(const Json& node, const std::string& where);

Result<Json> Rebuild(const Json& node, const std::string& where) {
  if (!node.is_object()) return node;
  bool numbered = !node.empty();
  for (auto it = node.begin(); it != node.end(); ++it) numbered = numbered && it.key()[0] == '#';
  if (numbered) return Listify(node, where);
  Json out = Json::object();
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string& key = it.key();
    if (key[0] == '#') {
      return InvalidArgument("parameter '" + where + key.substr(1) +
                             "' mixes numbered and named parts");
    }
    TF_ASSIGN_OR_RETURN(Json value, Rebuild(it.value(), where + key + "."));
    const MapName* map = nullptr;
    for (const MapName& m : kMaps) map = key == m.query ? &m : map;
    const ListName* list = nullptr;
    for (const ListName& l : kLists) list = key == l.query ? &l : list;
    if (map != nullptr) {
      if (!value.is_array()) {
        return InvalidArgument("parameter '" + where + key + "' must be numbered: " + key + ".1." +
                               std::string(map->key) + ", " + key + ".1." +
                               std::string(map->value));
      }
      Json m = Json::object();
      for (const Json& entry : value) {
        if (!entry.is_object() || !entry.contains(map->key) || !entry[map->key].is_string()) {
          return InvalidArgument("each " + where + key + ".N needs a " + std::string(map->key));
        }
        m[entry[map->key].get<std::string>()] = entry.value(map->value, Json(""));
      }
      out[std::string(map->json)] = std::move(m);
    } else if (list != nullptr) {
      if (!value.is_array()) {
        return InvalidArgument("parameter '" + where + key + "' must be numbered: " + key + ".1, " +
                               key + ".2, ...");
      }
      out[std::string(list->json)] = std::move(value);
    } else if (key.ends_with("BatchRequestEntry")) {
      if (!value.is_array()) {
        return InvalidArgument("parameter '" + where + key + "' must be numbered: " + key +
                               ".1.Id, ...");
      }
      out["Entries"] = std::move(value);
    } else {
      out[key] = std::move(value);
    }
  }
  return out;
}

Result<Json> Listify(const Json& node, const std::string& where) {
  std::vector<std::pair<int, const Json*>> items;
  for (auto it = node.begin(); it != node.end(); ++it) {
    items.emplace_back(std::atoi(it.key().c_str() + 1), &it.value());
  }
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  Json out = Json::array();
  for (const auto& [index, value] : items) {
    TF_ASSIGN_OR_RETURN(Json v, Rebuild(*value, where + std::to_string(index) + "."));
    out.push_back(std::move(v));
  }
  return out;
}

void WriteScalar(s3::XmlWriter& w, std::string_view name, const Json& value) {
  if (value.is_string()) {
    w.Element(name, value.get_ref<const std::string&>());
  } else if (value.is_boolean()) {
    w.Element(name, value.get<bool>() ? "true" : "false");
  } else {
    w.Element(name, value.dump());
  }
}

void WriteMember(s3::XmlWriter& w, std::string_view action, const std::string& name,
                 const Json& value);

void WriteStructure(s3::XmlWriter& w, std::string_view action, const Json& object) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    WriteMember(w, action, it.key(), it.value());
  }
}

void WriteMember(s3::XmlWriter& w, std::string_view action, const std::string& name,
                 const Json& value) {
  for (const MapName& m : kMaps) {
    if (name != m.json || !value.is_object()) continue;
    for (auto it = value.begin(); it != value.end(); ++it) {
      w.Open(m.query);
      w.Element(m.key, it.key());
      if (it.value().is_object()) {
        w.Open(m.value);
        WriteStructure(w, action, it.value());
        w.Close();
      } else {
        WriteScalar(w, m.value, it.value());
      }
      w.Close();
    }
    return;
  }
  if (value.is_array()) {
    std::string element = name;
    for (const ListName& l : kLists) element = name == l.json ? std::string(l.query) : element;
    if (name == "QueueUrls" || name == "queueUrls") element = "QueueUrl";
    if (name == "Messages") element = "Message";
    if (name == "Successful") element = std::string(action) + "ResultEntry";
    if (name == "Failed") element = "BatchResultErrorEntry";
    if (name == "Results") element = "ListMessageMoveTasksResultEntry";
    for (const Json& item : value) {
      if (item.is_object()) {
        w.Open(element);
        WriteStructure(w, action, item);
        w.Close();
      } else {
        WriteScalar(w, element, item);
      }
    }
    return;
  }
  if (value.is_object()) {
    w.Open(name);
    WriteStructure(w, action, value);
    w.Close();
    return;
  }
  WriteScalar(w, name, value);
}

}  // namespace

Result<QueryRequest> FromQueryParams(const std::map<std::string, std::string>& params) {
  QueryRequest out;
  Json tree = Json::object();
  for (const auto& [name, value] : params) {
    if (name == "Action") {
      out.action = value;
    } else if (name == "Version") {
      out.version = value;
    } else if (name.rfind("X-Amz-", 0) == 0 || name.rfind("AWSAccessKeyId", 0) == 0) {
      continue;  // a presigned request's signature, checked before
    } else {
      TF_RETURN_IF_ERROR(Place(tree, name, value, name));
    }
  }
  TF_ASSIGN_OR_RETURN(out.params, Rebuild(tree, ""));
  return out;
}

std::string ToQueryXml(std::string_view action, const Json& result, std::string_view request_id) {
  s3::XmlWriter w;
  w.Open(std::string(action) + "Response", kNamespace);
  const bool has_result =
      std::find(std::begin(kNoResult), std::end(kNoResult), action) == std::end(kNoResult);
  if (has_result) {
    w.Open(std::string(action) + "Result");
    WriteStructure(w, action, result);
    w.Close();
  }
  w.Open("ResponseMetadata");
  w.Element("RequestId", request_id);
  w.Close();
  return w.Finish();
}

}  // namespace tf::sqs
