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
    // The request body is a string: the records are copied into one that an earlier xorb left
    // (its pages already touched), and their own buffer goes back to the planner.
    std::string body;
    if (!spare_bodies_.empty()) {
      body = std::move(spare_bodies_.back());
      spare_bodies_.pop_back();
    }
    changed_.notify_all();
    lock.unlock();
    body.assign(reinterpret_cast<const char*>(xorb.records.data()), xorb.records.size());
    xorb.records.clear();
    lock.lock();
    if (spare_records_.empty()) spare_records_.push_back(std::move(xorb.records));
    lock.unlock();
    std::vector<std::byte>().swap(xorb.records);
    const std::size_t size = body.size();
    auto stored = cas_.upload_xorb(xorb.hash, body);
    lock.lock();
    if (spare_bodies_.size() < parallel_) spare_bodies_.push_back(std::move(body));
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
