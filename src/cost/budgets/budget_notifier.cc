#include "cost/budgets/budget_notifier.h"

#include <algorithm>
#include <map>

#include "base/log.h"
#include "base/time_format.h"
#include "base/version.h"
#include "cost/budgets/budget.h"
#include "http/http.h"

namespace tf::cost {
namespace {

constexpr size_t kBodyInError = 200;

class HttpWebhookSender final : public WebhookSender {
 public:
  explicit HttpWebhookSender(std::vector<std::string> allowed) : allowed_(std::move(allowed)) {}

  Status Post(const std::string& url, const std::string& json_body,
              std::chrono::milliseconds timeout) override {
    TF_RETURN_IF_ERROR(CheckWebhookUrl(url));
    TF_RETURN_IF_ERROR(CheckWebhookAllowed(url, allowed_));
    std::string base, target;
    SplitWebhookUrl(url, &base, &target);
    TF_ASSIGN_OR_RETURN(std::unique_ptr<http::Client> client, http::Client::Create(base));
    http::Headers headers = {{"Content-Type", "application/json"},
                             {"User-Agent", std::string("tensorfleet/") + kTensorfleetVersion}};
    TF_ASSIGN_OR_RETURN(http::ClientResponse response,
                        client->Send("POST", target, headers, json_body, timeout));
    if (response.status >= 200 && response.status < 300) return OkStatus();
    std::string body = response.body.substr(0, kBodyInError);
    return Unavailable("the webhook answered HTTP " + std::to_string(response.status) +
                       (body.empty() ? "" : ": " + body));
  }

 private:
  const std::vector<std::string> allowed_;
};

}  // namespace

std::unique_ptr<WebhookSender> NewHttpWebhookSender(std::vector<std::string> allowed_hosts) {
  return std::make_unique<HttpWebhookSender>(std::move(allowed_hosts));
}

TimeMs RetryDelay(const NotifierOptions& o, int attempts) {
  TimeMs delay = std::max<TimeMs>(o.first_retry_ms, 1);
  for (int i = 1; i < attempts && delay < o.max_retry_ms; ++i) delay *= 2;
  return std::min(delay, o.max_retry_ms);
}

BudgetNotifier::BudgetNotifier(store::Store& store, WebhookSender& sender, NotifierOptions options)
    : store_(store), sender_(sender), options_(options) {}

nlohmann::json BudgetNotifier::AlertBody(const store::BudgetAlert& a,
                                         const std::string& budget_name,
                                         const std::string& project_name, TimeMs period_end) {
  return {{"budget", budget_name},
          {"budget_id", a.budget_id},
          {"project", project_name},
          {"project_id", a.project_id},
          {"kind", a.kind},
          {"threshold", a.threshold},
          {"spend", a.spend},
          {"amount", a.amount},
          {"period", {{"start", FormatTime(a.period_start)}, {"end", FormatTime(period_end)}}},
          {"fired_at", FormatTime(a.fired_at)},
          {"seq", a.seq},
          {"message", a.message}};
}

Result<DeliveryStats> BudgetNotifier::DeliverDue(TimeMs now, const std::atomic<bool>* stop) {
  TF_ASSIGN_OR_RETURN(std::vector<store::BudgetAlert> due,
                      store_.budgets().DueBudgetAlerts(now, options_.batch));
  DeliveryStats stats;
  std::map<std::string, std::vector<store::BudgetRecord>> budgets_of;  // by project id
  std::map<std::string, std::string> project_names;
  for (store::BudgetAlert& alert : due) {
    if (stop != nullptr && stop->load()) break;
    if (!budgets_of.count(alert.project_id)) {
      TF_ASSIGN_OR_RETURN(budgets_of[alert.project_id],
                          store_.budgets().ListBudgets(alert.project_id));
      auto project = store_.auth().GetProject(alert.project_id);
      project_names[alert.project_id] = project.ok() ? project->name : alert.project_id;
    }
    const auto& records = budgets_of[alert.project_id];
    auto record = std::find_if(records.begin(), records.end(), [&](const store::BudgetRecord& r) {
      return r.id == alert.budget_id;
    });
    Result<Budget> budget = InvalidArgument("the budget no longer exists");
    if (record != records.end()) {
      auto json = nlohmann::json::parse(record->doc_json, nullptr, false);
      budget = BudgetFromJson(json, record->created_at);
    }

    Status sent;
    if (!budget.ok()) {
      sent = budget.status();
    } else if (budget->webhook.empty()) {
      sent = FailedPrecondition("the budget has no webhook any more");
    } else {
      TimeMs period_end = PeriodAt(budget->period, alert.period_start).end;
      std::string body =
          AlertBody(alert, record->name, project_names[alert.project_id], period_end).dump();
      sent = sender_.Post(budget->webhook, body, options_.timeout);
    }

    ++alert.delivery_attempts;
    if (sent.ok()) {
      alert.delivered_at = now;
      alert.next_delivery_at.reset();
      alert.last_error.clear();
      ++stats.delivered;
    } else if (sent.code() == StatusCode::kFailedPrecondition || !budget.ok() ||
               alert.delivery_attempts >= options_.max_attempts) {
      alert.next_delivery_at.reset();
      alert.last_error = "gave up after " + std::to_string(alert.delivery_attempts) +
                         (alert.delivery_attempts == 1 ? " attempt: " : " attempts: ") +
                         sent.message();
      ++stats.gave_up;
      spdlog::warn("budget alert {} of project {}: {}", alert.seq, alert.project_id,
                   alert.last_error);
    } else {
      alert.last_error = sent.message();
      alert.next_delivery_at = now + RetryDelay(options_, alert.delivery_attempts);
      ++stats.failed;
      spdlog::info(
          "budget alert {} of project {}: webhook failed ({}), attempt {} of {}; next "
          "try at {}",
          alert.seq, alert.project_id, sent.message(), alert.delivery_attempts,
          options_.max_attempts, FormatTime(*alert.next_delivery_at));
    }
    TF_RETURN_IF_ERROR(store_.budgets().UpdateBudgetAlertDelivery(alert));
  }
  return stats;
}

}  // namespace tf::cost
