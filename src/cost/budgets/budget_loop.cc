#include "cost/budgets/budget_loop.h"

#include "base/log.h"

namespace tf::cost {

BudgetLoop::BudgetLoop(BudgetService& budgets, store::Store& store,
                       std::unique_ptr<WebhookSender> sender, const Clock& clock,
                       BudgetLoopOptions options)
    : budgets_(budgets),
      sender_(std::move(sender)),
      notifier_(store, *sender_, options.notifier),
      clock_(clock),
      options_(std::move(options)),
      thread_([this] { Run(); }) {}

BudgetLoop::~BudgetLoop() { Stop(); }

void BudgetLoop::Kick() {
  MutexLock lock(mu_);
  kicked_ = true;
  cv_.notify_one();
}

void BudgetLoop::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void BudgetLoop::Run() {
  MutexLock lock(mu_);
  while (!stopping_) {
    lock.WaitFor(cv_, options_.interval, [&]() REQUIRES(mu_) { return stopping_ || kicked_; });
    if (stopping_) break;
    kicked_ = false;
    lock.Unlock();
    if (!options_.active || options_.active()) {
      auto evaluated = budgets_.Evaluate(clock_.Now());
      if (!evaluated.ok()) spdlog::warn("budget evaluation: {}", evaluated.status().ToString());
      auto delivered = notifier_.DeliverDue(clock_.Now(), &stopping_);
      if (!delivered.ok()) {
        spdlog::warn("budget alert delivery: {}", delivered.status().ToString());
      }
    }
    lock.Lock();
  }
}

}  // namespace tf::cost
