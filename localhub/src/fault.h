#pragma once
// Injected faults for client tests: picks the rule a request triggers and counts its uses.
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "khub/localhub/config.h"

namespace khub::localhub {

class FaultInjector {
 public:
  explicit FaultInjector(std::vector<FaultRule> rules);
  /// First rule whose pattern matches "METHOD /path" (patterns with a space) or "/path" and
  /// that has uses left; consumes one use.
  [[nodiscard]] std::optional<FaultRule> match(std::string_view method, std::string_view path);

 private:
  std::mutex mutex_;
  std::vector<FaultRule> rules_;
  std::vector<int> left_;
};

}  // namespace khub::localhub
