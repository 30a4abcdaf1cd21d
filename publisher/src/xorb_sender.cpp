#include "xorb_sender.h"

namespace khub::publish::detail {

XorbSender::~XorbSender() { stop(); }

Status XorbSender::submit(xet::NewXorb xorb) {
  std::unique_lock lock(mutex_);
  if (workers_.empty()) {  // started by the first xorb: a push that sends none starts no thread
    for (std::size_t i = 0; i < parallel_; ++i) workers_.emplace_back([this] { work(); });
  }
  changed_.wait(lock, [&] { return failure_ || queue_.empty(); });
  if (failure_) return *failure_;
  queue_.push_back(std::move(xorb));
  changed_.notify_all();
  return {};
}

Status XorbSender::finish() {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return failure_ || (queue_.empty() && busy_ == 0); });
  }
  stop();
  if (failure_) return *failure_;
  return {};
}

void XorbSender::work() {
  for (;;) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closing_ || failure_ || !queue_.empty(); });
    if (closing_ || failure_) return;
    xet::NewXorb xorb = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    changed_.notify_all();
    lock.unlock();
    // The records are the request body as they lie; once sent, their buffer goes back to the
    // planner for a later xorb (its pages already touched).
    const std::size_t size = xorb.records.size();
    auto stored = cas_.upload_xorb(xorb.hash, xorb.records);
    xorb.records.clear();
    lock.lock();
    if (spare_records_.size() < parallel_) spare_records_.push_back(std::move(xorb.records));
    --busy_;
    if (!stored) {
      if (!failure_) failure_ = std::move(stored).error();
    } else {
      bytes_sent_ += size;
      ++xorbs_sent_;
    }
    changed_.notify_all();
  }
}

std::vector<std::byte> XorbSender::spare_records() {
  std::lock_guard lock(mutex_);
  if (spare_records_.empty()) return {};
  auto out = std::move(spare_records_.back());
  spare_records_.pop_back();
  return out;
}

void XorbSender::stop() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
    queue_.clear();
  }
  changed_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

}  // namespace khub::publish::detail
