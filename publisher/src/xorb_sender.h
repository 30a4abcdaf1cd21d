#pragma once
// Sends new xorbs to the CAS while the planner goes on packing: a few uploads at once, and at most
// one more xorb waiting, so memory stays near (parallel + 2) x 16 MiB however large the push (a
// xorb's records are sent as they lie, and their buffer is reused for a later xorb's).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cas_session.h"

namespace khub::publish::detail {

class XorbSender {
 public:
  XorbSender(CasSession& cas, std::size_t parallel) : cas_(cas), parallel_(parallel == 0 ? 1 : parallel) {}
  ~XorbSender();
  XorbSender(const XorbSender&) = delete;
  XorbSender& operator=(const XorbSender&) = delete;

  /// Queues a xorb; waits while one is queued already. Returns the first failure of any upload so
  /// far (the planner then stops).
  [[nodiscard]] Status submit(xet::NewXorb xorb);
  /// Waits until every queued xorb is stored; the first failure, if any.
  [[nodiscard]] Status finish();
  /// A records buffer a sent xorb left behind (emptied, its capacity kept), or an empty vector: for
  /// the planner's next xorb (UploadPlanner's BufferSource), so that large pushes reuse memory
  /// already touched rather than fault in fresh pages for every xorb.
  [[nodiscard]] std::vector<std::byte> spare_records();

  [[nodiscard]] std::uint64_t bytes_sent() const { return bytes_sent_; }
  [[nodiscard]] std::size_t xorbs_sent() const { return xorbs_sent_; }

 private:
  void work();
  void stop();

  CasSession& cas_;
  std::size_t parallel_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<xet::NewXorb> queue_;
  std::vector<std::vector<std::byte>> spare_records_;  // at most `parallel`
  std::size_t busy_ = 0;
  bool closing_ = false;
  std::optional<Error> failure_;
  std::uint64_t bytes_sent_ = 0;
  std::size_t xorbs_sent_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace khub::publish::detail
