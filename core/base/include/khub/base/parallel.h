#pragma once
// Runs jobs 0..count-1 on up to `threads` threads; after the first failure no new job starts, and
// that failure is the result. Downloads of a snapshot's files and of a Xet file's xorb ranges use it.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "khub/base/error.h"

namespace khub {

inline Status run_parallel(std::size_t count, std::size_t threads, const std::function<Status(std::size_t)>& job) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::optional<Error> first_error;
  auto worker = [&] {
    while (!failed.load()) {
      const std::size_t i = next.fetch_add(1);
      if (i >= count) return;
      if (auto st = job(i); !st) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!first_error) first_error = std::move(st).error();
        failed = true;
      }
    }
  };
  threads = std::min(threads, count);
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (first_error) return std::move(*first_error);
  return {};
}

}  // namespace khub
