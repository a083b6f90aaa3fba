// The server's budget thread: every interval it evaluates every budget (BudgetService::Evaluate)
// and then delivers the webhook alerts that are due (BudgetNotifier::DeliverDue). It has its own
// thread so that a slow or dead webhook, or a slow spend query, never delays the job controller
// or a request.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "cost/budgets/budget_notifier.h"
#include "cost/budgets/budget_service.h"

namespace tf::cost {

struct BudgetLoopOptions {
  std::chrono::milliseconds interval{30'000};
  NotifierOptions notifier;
  // Rounds run only while this returns true (servers sharing a store: the leader's). Null:
  // always.
  std::function<bool()> active;
};

class BudgetLoop {
 public:
  // Starts the thread; the first round runs after one interval.
  BudgetLoop(BudgetService& budgets, store::Store& store, std::unique_ptr<WebhookSender> sender,
             const Clock& clock, BudgetLoopOptions options);
  // Stop().
  ~BudgetLoop();

  // Runs a round soon (after a budget changed).
  void Kick();
  // Ends the round in progress after its current delivery and joins the thread. Idempotent.
  void Stop();

 private:
  void Run();

  BudgetService& budgets_;
  std::unique_ptr<WebhookSender> sender_;
  BudgetNotifier notifier_;
  const Clock& clock_;
  BudgetLoopOptions options_;
  std::atomic<bool> stopping_{false};
  Mutex mu_;
  std::condition_variable cv_;
  bool kicked_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tf::cost
