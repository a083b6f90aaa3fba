#include "endpoints/response_relay.h"

namespace tf::endpoints {

void ResponseRelay::OnHead(const http::ClientResponse& head) {
  {
    MutexLock lock(mu_);
    head_ = head;
  }
  Wake();
}

bool ResponseRelay::OnChunk(std::string_view piece) {
  if (cancelled()) return false;
  {
    MutexLock lock(mu_);
    data_.append(piece);
  }
  Wake();
  return true;
}

void ResponseRelay::OnEnd(const Status& status) {
  {
    MutexLock lock(mu_);
    done_ = true;
    status_ = status;
  }
  Wake();
}

void ResponseRelay::Wake() {
  asio::post(executor_, [self = shared_from_this()] { self->timer_.cancel(); });
}

bool ResponseRelay::TakeLocked(Batch* out) {
  if (head_) {
    out->head = std::move(head_);
    head_.reset();
  }
  out->data.swap(data_);
  data_.clear();
  if (done_ && !taken_done_) {
    taken_done_ = true;
    out->done = true;
    out->status = status_;
  }
  return out->head || !out->data.empty() || out->done;
}

awaitable<ResponseRelay::Batch> ResponseRelay::Next(std::chrono::milliseconds wait) {
  Batch batch;
  {
    MutexLock lock(mu_);
    if (TakeLocked(&batch)) co_return batch;
  }
  // A wake-up posted after the check above runs only once this coroutine waits below.
  timer_.expires_after(wait);
  boost::system::error_code ec;
  co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  MutexLock lock(mu_);
  TakeLocked(&batch);
  co_return batch;
}

}  // namespace tf::endpoints
