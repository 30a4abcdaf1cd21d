#include "fault.h"

#include "http_util.h"

namespace khub::localhub {

FaultInjector::FaultInjector(std::vector<FaultRule> rules) : rules_(std::move(rules)) {
  for (const auto& r : rules_) left_.push_back(r.count);
}

std::optional<FaultRule> FaultInjector::match(std::string_view method, std::string_view path) {
  if (rules_.empty()) return std::nullopt;
  std::string with_method = std::string(method) + " " + std::string(path);
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < rules_.size(); ++i) {
    const auto& r = rules_[i];
    bool has_method = r.pattern.find(' ') != std::string::npos;
    if (!glob_match(r.pattern, has_method ? std::string_view(with_method) : path)) continue;
    if (left_[i] == 0) continue;
    if (left_[i] > 0) --left_[i];
    return r;
  }
  return std::nullopt;
}

}  // namespace khub::localhub
