#include "endpoints/endpoint_doc.h"

#include "jobs/json_fields.h"

namespace tf::endpoints {

using Json = nlohmann::json;

Json EndpointDocToJson(const EndpointDoc& doc) {
  Json replicas = Json::array();
  for (const Replica& r : doc.replicas) {
    replicas.push_back({{"id", r.id},
                        {"generation", r.generation},
                        {"state", r.state},
                        {"job_id", r.job_id},
                        {"node_id", r.node_id},
                        {"address", r.address},
                        {"key", r.key},
                        {"since", r.since},
                        {"failed_checks", r.failed_checks},
                        {"stop_sent", r.stop_sent},
                        {"leaving", r.leaving},
                        {"on_spot", r.on_spot},
                        {"to_spot", r.to_spot}});
  }
  Json scaling = Json::array();
  for (const ScalingEvent& e : doc.scaling) {
    scaling.push_back(
        {{"at", e.at}, {"serving", e.serving}, {"warm", e.warm}, {"reason", e.reason}});
  }
  return {{"spec", EndpointSpecToJson(doc.spec)},
          {"generation", doc.generation},
          {"replicas", std::move(replicas)},
          {"scaling", std::move(scaling)}};
}

Result<EndpointDoc> EndpointDocFromJson(const Json& json) {
  if (!json.is_object() || !json.contains("spec")) {
    return InvalidArgument("an endpoint document must be an object with a spec");
  }
  EndpointDoc doc;
  TF_ASSIGN_OR_RETURN(doc.spec, EndpointSpecFromJson(json.at("spec")));
  Status status;
  jobs::JsonFields top(&json, "", &status);
  (void)top.Raw("spec");
  top.Read("generation", doc.generation);
  auto items = [&](std::string_view key) -> const Json* {
    const Json* list = top.Raw(key);
    if (list != nullptr && !list->is_array()) {
      top.Fail(std::string(key), "must be an array");
      return nullptr;
    }
    return list;
  };
  if (const Json* list = items("replicas")) {
    for (size_t i = 0; i < list->size(); ++i) {
      jobs::JsonFields f(&(*list)[i], "replicas[" + std::to_string(i) + "]", &status);
      Replica r;
      f.Read("id", r.id);
      f.Read("generation", r.generation);
      f.Read("state", r.state);
      f.Read("job_id", r.job_id);
      f.Read("node_id", r.node_id);
      f.Read("address", r.address);
      f.Read("key", r.key);
      f.Read("since", r.since);
      f.Read("failed_checks", r.failed_checks);
      f.Read("stop_sent", r.stop_sent);
      f.Read("leaving", r.leaving);
      f.Read("on_spot", r.on_spot);
      f.Read("to_spot", r.to_spot);
      f.Finish();
      doc.replicas.push_back(std::move(r));
    }
  }
  if (const Json* list = items("scaling")) {
    for (size_t i = 0; i < list->size(); ++i) {
      jobs::JsonFields f(&(*list)[i], "scaling[" + std::to_string(i) + "]", &status);
      ScalingEvent e;
      f.Read("at", e.at);
      f.Read("serving", e.serving);
      f.Read("warm", e.warm);
      f.Read("reason", e.reason);
      f.Finish();
      doc.scaling.push_back(std::move(e));
    }
  }
  top.Finish();
  TF_RETURN_IF_ERROR(status);
  return doc;
}

}  // namespace tf::endpoints
