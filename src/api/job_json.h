// The JSON shapes of jobs, attempts, events, metrics and nodes in the API (docs/api.md).
#pragma once

#include <nlohmann/json.hpp>

#include "jobs/job_service.h"

namespace tf::api {

// A job for its owner: never the job token's secret.
// A time as the API writes it (base/time_format.h), or null for 0 (not yet).
nlohmann::json TimeOrNull(TimeMs t);
nlohmann::json JobToJson(const jobs::Job& job);
nlohmann::json JobEventToJson(const store::JobEvent& event);
nlohmann::json MetricPointToJson(const store::MetricPoint& point);
// The node as `nodes` shows it to project `project_id`: only that project's ranks are named
// in "running" ("" for an admin, who sees every one).
nlohmann::json NodeViewToJson(const jobs::NodeView& node, const std::string& project_id);
// What a worker runs: includes the job token's secret.
nlohmann::json AssignmentsToJson(const jobs::NodeAssignments& assignments);

}  // namespace tf::api
