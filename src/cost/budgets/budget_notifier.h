// Delivers budget alerts to their budget's webhook: a JSON POST per alert, retried with
// exponential backoff while the webhook is down, given up after a number of attempts.
//
// The server calls DeliverDue() on its budget thread (api/app.cc), never on the scheduler's:
// a webhook that is slow or down delays only other deliveries. Each attempt waits at most
// `timeout`. An alert's outcome is kept on it in the store (store::BudgetAlert): delivered_at
// on a 2xx answer; otherwise delivery_attempts, last_error and the next try in
// next_delivery_at, or no next try and "gave up after N attempts: ..." in last_error.
//
// The body (docs/cost.md, "Budgets"):
//   {"budget": "gpu-monthly", "budget_id": "bud_...", "project": "research",
//    "project_id": "prj_...", "kind": "forecast", "threshold": 80, "spend": 412.5,
//    "amount": 500, "period": {"start": "...", "end": "..."}, "fired_at": "...", "seq": 12,
//    "message": "budget 'gpu-monthly' is forecast to reach 80% ..."}
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "store/store.h"

namespace tf::cost {

// The HTTP seam: one POST of a JSON body to a URL.
class WebhookSender {
 public:
  virtual ~WebhookSender() = default;
  // OK for a 2xx answer. Otherwise a status saying what happened: kUnavailable when the host
  // cannot be reached, kDeadlineExceeded after `timeout`, kUnavailable naming the HTTP status
  // and the start of the body for any other answer. Called from one thread at a time.
  virtual Status Post(const std::string& url, const std::string& json_body,
                      std::chrono::milliseconds timeout) = 0;
};

// Sends with the server's HTTP client (http:// only), a fresh connection per POST; only to
// `allowed_hosts` when it is not empty (CheckWebhookAllowed: a budget written before the list
// was set is refused at delivery, and its alert records why).
std::unique_ptr<WebhookSender> NewHttpWebhookSender(std::vector<std::string> allowed_hosts = {});

struct NotifierOptions {
  TimeMs first_retry_ms = 10 * kSecondMs;     // after the first failure; doubling after each
  TimeMs max_retry_ms = kHourMs;              // the backoff's cap
  int max_attempts = 12;                      // then given up (about 4 hours with the defaults)
  std::chrono::milliseconds timeout{10'000};  // per attempt
  int batch = 100;                            // alerts per DeliverDue call at most
};

// The wait before the next attempt after `attempts` failed ones (1, 2, ...):
// first_retry_ms × 2^(attempts−1), capped at max_retry_ms.
TimeMs RetryDelay(const NotifierOptions& options, int attempts);

struct DeliveryStats {
  int delivered = 0;
  int failed = 0;  // will be retried
  int gave_up = 0;
};

class BudgetNotifier {
 public:
  BudgetNotifier(store::Store& store, WebhookSender& sender, NotifierOptions options = {});

  // Tries every alert due at `now` once (delivered_at and the next try are reckoned from
  // `now`). The store's errors are returned; a webhook's failure is recorded on its alert and
  // counted, never returned. Returns early, between two deliveries, once *stop is true.
  // Not thread-safe: call from one thread.
  Result<DeliveryStats> DeliverDue(TimeMs now, const std::atomic<bool>* stop = nullptr);

  // The JSON POSTed for `alert` of the budget named `budget_name`, whose period ends at
  // `period_end`.
  static nlohmann::json AlertBody(const store::BudgetAlert& alert, const std::string& budget_name,
                                  const std::string& project_name, TimeMs period_end);

 private:
  store::Store& store_;
  WebhookSender& sender_;
  NotifierOptions options_;
};

}  // namespace tf::cost
