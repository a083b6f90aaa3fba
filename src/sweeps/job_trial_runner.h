// The sweep controller's trials as managed jobs (sweep_controller.h TrialRunner): submitted,
// inspected and cancelled through the job service, their metric streams read from the store,
// their cost metered (cost/metering/).
#pragma once

#include <memory>

#include "base/clock.h"
#include "jobs/job_service.h"
#include "store/store.h"
#include "sweeps/sweep_controller.h"

namespace tf::sweeps {

std::unique_ptr<TrialRunner> NewJobTrialRunner(jobs::JobService& jobs, store::Store& store,
                                               const Clock& clock);

}  // namespace tf::sweeps
