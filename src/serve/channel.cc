#include "serve/channel.h"

namespace tf::serve {

ChannelSink::ChannelSink(asio::any_io_executor executor) : executor_(executor), timer_(executor) {}

bool ChannelSink::OnStep(const engine::GenerateStep& step) {
  if (cancelled()) return false;
  {
    MutexLock lock(mu_);
    Step s;
    if (step.token != nullptr) s.token = *step.token;
    s.text = std::string(step.text);
    steps_.push_back(std::move(s));
  }
  Wake();
  return true;
}

void ChannelSink::OnDone(const Status& status, const engine::GenerateResult& result) {
  {
    MutexLock lock(mu_);
    done_ = true;
    status_ = status;
    result_ = result;
  }
  Wake();
}

void ChannelSink::Wake() {
  asio::post(executor_, [self = shared_from_this()] { self->timer_.cancel(); });
}

bool ChannelSink::TakeLocked(Batch* out) {
  out->steps.swap(steps_);
  steps_.clear();
  if (done_ && !taken_done_) {
    taken_done_ = true;
    out->done = true;
    out->status = status_;
    out->result = result_;
  }
  return !out->steps.empty() || out->done;
}

awaitable<ChannelSink::Batch> ChannelSink::Next(std::chrono::milliseconds wait) {
  Batch batch;
  {
    MutexLock lock(mu_);
    if (TakeLocked(&batch)) co_return batch;
  }
  // A wake-up posted after the check above runs only once this coroutine waits below.
  timer_.expires_after(wait);
  boost::system::error_code ec;
  co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  batch.timed_out = !ec;
  MutexLock lock(mu_);
  TakeLocked(&batch);
  co_return batch;
}

}  // namespace tf::serve
