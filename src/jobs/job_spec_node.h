// A job spec written inside another YAML file (a sweep's `job:` mapping), read with the same
// rules as a job spec file and with the lines of the file it is in.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string_view>

#include "base/status.h"
#include "jobs/job_spec.h"

namespace tf::jobs {

// As ParseJobSpec, for a mapping node of a document already loaded from `source`; errors are
// "<source>:<line>: <field path>: <what>" with the field path relative to the mapping.
Result<JobSpec> ParseJobSpecNode(const YAML::Node& node, std::string_view source);

}  // namespace tf::jobs
