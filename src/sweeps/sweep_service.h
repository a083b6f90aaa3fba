// Sweeps over the store: what the API routes call (docs/sweeps.md). A sweep is a document
// (sweep_doc.h) that the controller (sweep_controller.h) carries on; the service starts it,
// shows it and asks it to stop.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "store/store.h"
#include "sweeps/sweep_doc.h"

namespace tf::sweeps {

struct SweepView {
  store::DocumentRecord record;
  SweepDoc doc;
};

class SweepService {
 public:
  // `check_template` refuses a trial job that no node of the fleet could ever run (the job
  // service's CheckPlaceable), naming the source.
  SweepService(
      store::DocumentStore& documents, const Clock& clock,
      std::function<Status(const jobs::JobSpec&, const std::string& source)> check_template)
      : documents_(documents), clock_(clock), check_template_(std::move(check_template)) {}

  // Starts the sweep that `spec_yaml` describes. `files`: the job files it names, by the path
  // as written; `code_key`: the trials' code bundle ("" = none). kInvalidArgument for a spec
  // that does not read (file, line, field) or a template no node could run; kAlreadyExists
  // naming the sweep's state when the project has one of that name.
  Result<SweepView> Start(const std::string& project_id, const std::string& spec_yaml,
                          const std::string& source, const nlohmann::json& files,
                          const std::string& code_key);
  Result<std::vector<SweepView>> List(const std::string& project_id);  // "" = every project
  Result<SweepView> Get(const std::string& project_id, const std::string& name);  // kNotFound
  // Asks a running sweep to stop: the controller stops its trials (their checkpoints kept).
  // Unchanged when it is stopping already; kFailedPrecondition when it has ended.
  Result<SweepView> Stop(const std::string& project_id, const std::string& name);

 private:
  store::DocumentStore& documents_;
  const Clock& clock_;
  std::function<Status(const jobs::JobSpec&, const std::string&)> check_template_;
};

}  // namespace tf::sweeps
