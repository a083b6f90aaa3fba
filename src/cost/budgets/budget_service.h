// Budgets over the store: what the /v1/budgets routes call, the evaluation the server runs every
// budget_interval (alerts recorded once per period, kind and threshold; spot work stopped for
// exhausted stop-spot budgets), and the admission check JobService::Submit asks before storing
// a job (refused while a refuse-submissions budget of the project is exhausted).
//
// Spend comes from a SpendFunction: metering over the store in the server
// (cost/metering_service.h, ProjectSpend), a table in tests. Every call blocks on the store;
// run them off the network threads. Thread-safe: the service keeps no state of its own.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "cost/budgets/budget.h"
#include "cost/budgets/budget_eval.h"
#include "jobs/job_service.h"
#include "store/store.h"

namespace tf::cost {

// What `project_id` spent over [since, until) as seen at `now`, in dollars.
using SpendFunction = std::function<Result<double>(const std::string& project_id, TimeMs since,
                                                   TimeMs until, TimeMs now)>;

// A budget as shown: its record, its document and where it stands now.
struct BudgetView {
  store::BudgetRecord record;
  Budget budget;
  BudgetStatus status;
};

struct BudgetEvaluateStats {
  int budgets = 0;       // evaluated
  int alerts = 0;        // recorded by this evaluation (not those that had fired before)
  int jobs_stopped = 0;  // cancelled by stop-spot budgets
  int errors = 0;        // budgets that could not be evaluated; each is logged
};

class BudgetService {
 public:
  BudgetService(store::Store& store, jobs::JobService& jobs, const Clock& clock,
                SpendFunction spend);

  // Budgets' webhooks may name only these hosts ("host" or "host:port"; CheckWebhookAllowed);
  // empty: any. Call before the service is used.
  void AllowWebhookHostsOnly(std::vector<std::string> hosts) { webhook_hosts_ = std::move(hosts); }

  // Creates the project's budget `name`, or replaces its document. *created says which.
  // kInvalidArgument naming the field for a bad name or document.
  Result<BudgetView> Put(const std::string& project_id, const std::string& name,
                         const nlohmann::json& doc, bool* created);
  Result<BudgetView> Get(const std::string& project_id, const std::string& name);  // kNotFound
  // A project's budgets ("" = every project's) with their status now, by project then name.
  Result<std::vector<BudgetView>> List(const std::string& project_id);
  // Deletes the budget and its alerts. kNotFound if the project has no such budget.
  Status Delete(const std::string& project_id, const std::string& name);
  // Alerts of a project ("" = every project's) after `after_seq`, oldest first.
  Result<std::vector<store::BudgetAlert>> Alerts(const std::string& project_id, int64_t after_seq,
                                                 int limit);

  // Evaluates every budget at `now`: records the alerts due (a budget with a webhook gets
  // next_delivery_at = now, for the notifier), logs each new one, and cancels the spot jobs of
  // projects whose stop-spot budget is exhausted. One budget failing does not stop the others.
  Result<BudgetEvaluateStats> Evaluate(TimeMs now);

  // Whether `project_id` may submit a job now: kFailedPrecondition naming the budget, its
  // spend and amount while one of its refuse-submissions budgets is exhausted; OK otherwise.
  Status AdmitSubmission(const std::string& project_id);

  // The project's unfinished jobs that are spot work: their current attempt has a rank on a
  // spot node, or their spec asks for spot capacity only.
  Result<std::vector<jobs::Job>> SpotJobs(const std::string& project_id);

 private:
  Result<BudgetView> View(const store::BudgetRecord& record, TimeMs now);
  Result<int> StopSpotJobs(const BudgetView& view);

  store::Store& store_;
  jobs::JobService& jobs_;
  const Clock& clock_;
  SpendFunction spend_;
  std::vector<std::string> webhook_hosts_;  // AllowWebhookHostsOnly; empty: any
};

}  // namespace tf::cost
