// Endpoints as the API sees them: create or update from a spec, read, scale, delete
// (docs/endpoints.md). Every change is a versioned write of the endpoint's record, retried on a
// concurrent change, so that two servers over one PostgreSQL never lose each other's writes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "endpoints/endpoint_doc.h"
#include "endpoints/endpoint_spec.h"
#include "store/store.h"

namespace tf::endpoints {

struct EndpointView {
  store::EndpointRecord record;
  EndpointDoc doc;
};

enum class ApplyOutcome {
  kCreated,
  kUpdated,    // a new generation: its replicas replace the old ones, rolling
  kRescaled,   // only the scaling settings changed: the replicas stay
  kUnchanged,  // the same spec again
};

// Whether going from `before` to `after` needs new replicas (the model, the server or what a
// replica runs on changed), rather than only a new count or new scaling settings.
bool NeedsNewReplicas(const EndpointSpec& before, const EndpointSpec& after);

class EndpointService {
 public:
  // Whether a replica of `spec` could be placed on some node of the fleet (the job service's
  // check of a job spec): an error naming why not.
  using PlacementCheck = std::function<Status(const EndpointSpec& spec)>;

  EndpointService(store::Store& store, const Clock& clock, PlacementCheck placeable = {})
      : store_(store), clock_(clock), placeable_(std::move(placeable)) {}

  // Creates the endpoint `spec.name` in the project, or updates it (ApplyOutcome says how).
  // kInvalidArgument for a spec ValidateEndpointSpec refuses, or one whose replicas no node of
  // the fleet could run (the placement check); kFailedPrecondition while the endpoint is being
  // deleted.
  Result<EndpointView> Apply(const std::string& project_id, const EndpointSpec& spec,
                             ApplyOutcome* outcome = nullptr);
  Result<EndpointView> Get(const std::string& project_id, const std::string& name);  // kNotFound
  // A project's endpoints ("" = every project's), by project and name.
  Result<std::vector<EndpointView>> List(const std::string& project_id);
  // New replica bounds (either may be left as it is). kInvalidArgument naming the flag for a
  // bound out of range or a max below the min.
  Result<EndpointView> Scale(const std::string& project_id, const std::string& name,
                             std::optional<int> min, std::optional<int> max);
  // Marks the endpoint deleting: the gateway stops routing to it at once, and it is removed
  // when its last replica has stopped (at once when it has none; `removed` says which).
  Result<EndpointView> Delete(const std::string& project_id, const std::string& name,
                              bool* removed = nullptr);

 private:
  // Reads the endpoint, lets `change` edit it, and writes it back naming the version read;
  // again from the read when another writer got there first.
  Result<EndpointView> Modify(const std::string& project_id, const std::string& name,
                              const std::function<Status(EndpointView&)>& change);

  store::Store& store_;
  const Clock& clock_;
  PlacementCheck placeable_;
};

// The record and document of an endpoint as stored; kInternal when the document is unreadable.
Result<EndpointView> ViewOf(const store::EndpointRecord& record);

}  // namespace tf::endpoints
