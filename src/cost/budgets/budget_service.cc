#include "cost/budgets/budget_service.h"

#include <map>

#include "base/crypto.h"
#include "base/log.h"
#include "cost/numbers.h"
#include "fleet/node_info.h"

namespace tf::cost {
namespace {

constexpr int kJobListLimit = 10'000;

Result<Budget> DecodeBudget(const store::BudgetRecord& r) {
  auto json = nlohmann::json::parse(r.doc_json, nullptr, false);
  if (json.is_discarded()) {
    return Internal("budget " + r.id + " holds a document that is not JSON");
  }
  auto budget = BudgetFromJson(json, r.created_at);
  if (!budget.ok()) return budget.status().WithContext("budget " + r.id);
  return budget;
}

// The nodes that are spot capacity, by id, as they registered.
Result<std::map<std::string, bool>> SpotNodes(store::Store& store) {
  TF_ASSIGN_OR_RETURN(std::vector<store::NodeRecord> nodes, store.nodes().ListNodes());
  std::map<std::string, bool> out;
  for (const store::NodeRecord& n : nodes) {
    auto info = fleet::NodeInfoFromJson(nlohmann::json::parse(n.info_json, nullptr, false));
    out[n.id] = info.ok() && info->spot;
  }
  return out;
}

bool RunsOnSpot(const jobs::Job& job, const std::map<std::string, bool>& spot_nodes) {
  if (job.spec.capacity == jobs::CapacityType::kSpot) return true;
  const jobs::Attempt* a = job.doc.current();
  if (a == nullptr || a->ended()) return false;
  for (const jobs::RankState& r : a->ranks) {
    if (r.state != "assigned" && r.state != "running") continue;
    auto node = spot_nodes.find(r.node_id);
    if (r.spot || (node != spot_nodes.end() && node->second)) return true;
  }
  return false;
}

}  // namespace

BudgetService::BudgetService(store::Store& store, jobs::JobService& jobs, const Clock& clock,
                             SpendFunction spend)
    : store_(store), jobs_(jobs), clock_(clock), spend_(std::move(spend)) {}

Result<BudgetView> BudgetService::View(const store::BudgetRecord& record, TimeMs now) {
  TF_ASSIGN_OR_RETURN(Budget budget, DecodeBudget(record));
  PeriodBounds period = PeriodAt(budget.period, now);
  auto spend = spend_(record.project_id, period.start, std::min(now, period.end), now);
  if (!spend.ok()) {
    return spend.status().WithContext("spend of project " + record.project_id + " for budget '" +
                                      record.name + "'");
  }
  BudgetView view{record, budget, {}};
  view.status = EvaluateBudget(record.name, budget, period, *spend, now).status;
  return view;
}

Result<BudgetView> BudgetService::Put(const std::string& project_id, const std::string& name,
                                      const nlohmann::json& doc, bool* created) {
  TF_RETURN_IF_ERROR(CheckBudgetName(name));
  const TimeMs now = clock_.Now();
  for (int tries = 0; tries < 3; ++tries) {
    auto existing = store_.budgets().GetBudget(project_id, name);
    if (existing.ok()) {
      TF_ASSIGN_OR_RETURN(Budget budget, BudgetFromJson(doc, existing->created_at));
      TF_RETURN_IF_ERROR(CheckWebhookAllowed(budget.webhook, webhook_hosts_)
                             .WithContext("budget field 'webhook'"));
      store::BudgetRecord r = *existing;
      r.doc_json = BudgetToJson(budget).dump();
      r.updated_at = now;
      Status st = store_.budgets().UpdateBudget(r);
      if (st.code() == StatusCode::kNotFound) continue;  // deleted meanwhile: create it
      TF_RETURN_IF_ERROR(st);
      *created = false;
      return View(r, now);
    }
    if (existing.status().code() != StatusCode::kNotFound) return existing.status();
    TF_ASSIGN_OR_RETURN(Budget budget, BudgetFromJson(doc, now));
    TF_RETURN_IF_ERROR(
        CheckWebhookAllowed(budget.webhook, webhook_hosts_).WithContext("budget field 'webhook'"));
    store::BudgetRecord r;
    r.id = "bud_" + RandomHex(8);
    r.project_id = project_id;
    r.name = name;
    r.doc_json = BudgetToJson(budget).dump();
    r.created_at = r.updated_at = now;
    Status st = store_.budgets().CreateBudget(r);
    if (st.code() == StatusCode::kAlreadyExists) continue;  // created meanwhile: replace it
    TF_RETURN_IF_ERROR(st);
    *created = true;
    return View(r, now);
  }
  return Aborted("budget '" + name + "' kept changing while it was being written; try again");
}

Result<BudgetView> BudgetService::Get(const std::string& project_id, const std::string& name) {
  auto record = store_.budgets().GetBudget(project_id, name);
  if (!record.ok() && record.status().code() == StatusCode::kNotFound) {
    return NotFound("budget '" + name + "' does not exist");
  }
  if (!record.ok()) return record.status();
  return View(*record, clock_.Now());
}

Result<std::vector<BudgetView>> BudgetService::List(const std::string& project_id) {
  TF_ASSIGN_OR_RETURN(std::vector<store::BudgetRecord> records,
                      store_.budgets().ListBudgets(project_id));
  const TimeMs now = clock_.Now();
  std::vector<BudgetView> out;
  for (const store::BudgetRecord& r : records) {
    TF_ASSIGN_OR_RETURN(BudgetView view, View(r, now));
    out.push_back(std::move(view));
  }
  return out;
}

Status BudgetService::Delete(const std::string& project_id, const std::string& name) {
  auto record = store_.budgets().GetBudget(project_id, name);
  if (!record.ok() && record.status().code() == StatusCode::kNotFound) {
    return NotFound("budget '" + name + "' does not exist");
  }
  if (!record.ok()) return record.status();
  return store_.budgets().DeleteBudget(record->id);
}

Result<std::vector<store::BudgetAlert>> BudgetService::Alerts(const std::string& project_id,
                                                              int64_t after_seq, int limit) {
  return store_.budgets().ListBudgetAlerts(project_id, after_seq, limit);
}

Result<BudgetEvaluateStats> BudgetService::Evaluate(TimeMs now) {
  TF_ASSIGN_OR_RETURN(std::vector<store::BudgetRecord> records, store_.budgets().ListBudgets(""));
  BudgetEvaluateStats stats;
  for (const store::BudgetRecord& r : records) {
    ++stats.budgets;
    auto view = View(r, now);
    if (!view.ok()) {
      ++stats.errors;
      spdlog::warn("budget evaluation: {}", view.status().ToString());
      continue;
    }
    const BudgetEvaluation evaluation =
        EvaluateBudget(r.name, view->budget, view->status.period, view->status.spend, now);
    for (const AlertDue& due : evaluation.alerts) {
      store::BudgetAlert alert;
      alert.budget_id = r.id;
      alert.project_id = r.project_id;
      alert.period_start = view->status.period.start;
      alert.kind = due.kind;
      alert.threshold = due.threshold;
      alert.fired_at = now;
      alert.spend = due.value;
      alert.amount = view->budget.amount;
      alert.message = due.message;
      if (!view->budget.webhook.empty()) alert.next_delivery_at = now;
      auto added = store_.budgets().AddBudgetAlert(alert);
      if (!added.ok()) {
        ++stats.errors;
        spdlog::warn("budget '{}' of project {}: recording its {} alert at {}% failed: {}", r.name,
                     r.project_id, due.kind, due.threshold, added.status().ToString());
        continue;
      }
      if (*added) {
        ++stats.alerts;
        spdlog::warn("budget alert ({}, project {}): {}", due.kind, r.project_id, due.message);
      }
    }
    if (view->status.exhausted() && view->budget.action == BudgetAction::kStopSpot) {
      auto stopped = StopSpotJobs(*view);
      if (!stopped.ok()) {
        ++stats.errors;
        spdlog::warn("budget '{}' of project {}: stopping spot jobs failed: {}", r.name,
                     r.project_id, stopped.status().ToString());
      } else {
        stats.jobs_stopped += *stopped;
      }
    }
  }
  return stats;
}

Result<int> BudgetService::StopSpotJobs(const BudgetView& view) {
  TF_ASSIGN_OR_RETURN(std::vector<jobs::Job> spot, SpotJobs(view.record.project_id));
  const std::string reason = "stopped by budget '" + view.record.name +
                             "': " + FormatUsd(view.status.spend) + " spent of " +
                             FormatUsd(view.budget.amount) + " (action stop-spot)";
  int stopped = 0;
  for (const jobs::Job& job : spot) {
    auto cancelled = jobs_.Cancel(view.record.project_id, job.id(), reason);
    if (cancelled.ok()) {
      ++stopped;
      spdlog::warn("job {} of project {} {}", job.id(), view.record.project_id, reason);
    } else if (cancelled.status().code() != StatusCode::kFailedPrecondition &&
               cancelled.status().code() != StatusCode::kNotFound) {
      return cancelled.status();  // kFailedPrecondition: it ended meanwhile
    }
  }
  return stopped;
}

Result<std::vector<jobs::Job>> BudgetService::SpotJobs(const std::string& project_id) {
  TF_ASSIGN_OR_RETURN(std::vector<jobs::Job> active, jobs_.List(project_id, false, kJobListLimit));
  TF_ASSIGN_OR_RETURN(auto spot_nodes, SpotNodes(store_));
  std::vector<jobs::Job> out;
  for (jobs::Job& job : active) {
    if (!jobs::IsTerminalJobState(job.state()) && RunsOnSpot(job, spot_nodes)) {
      out.push_back(std::move(job));
    }
  }
  return out;
}

Status BudgetService::AdmitSubmission(const std::string& project_id) {
  TF_ASSIGN_OR_RETURN(std::vector<store::BudgetRecord> records,
                      store_.budgets().ListBudgets(project_id));
  const TimeMs now = clock_.Now();
  for (const store::BudgetRecord& r : records) {
    auto budget = DecodeBudget(r);
    if (!budget.ok() || budget->action != BudgetAction::kRefuseSubmissions) continue;
    TF_ASSIGN_OR_RETURN(BudgetView view, View(r, now));
    if (!view.status.exhausted()) continue;
    return FailedPrecondition(
        "budget '" + r.name + "' is exhausted: " + FormatUsd(view.status.spend) + " spent of " +
        FormatUsd(view.budget.amount) + " in the " + PeriodName(view.budget.period) + " period " +
        FormatUtcDate(view.status.period.start) + " to " + FormatUtcDate(view.status.period.end) +
        "; new jobs are refused until the period ends or the budget is raised "
        "(tensorfleet cost budget set " +
        r.name + " --amount ...)");
  }
  return OkStatus();
}

}  // namespace tf::cost
