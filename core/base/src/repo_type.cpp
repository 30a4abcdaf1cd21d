#include "khub/base/repo_type.h"

#include <array>

namespace khub {
namespace {

struct Names {
  RepoType type;
  std::string_view name, segment, url_prefix, cache_prefix;
};

constexpr std::array<Names, 4> kNames = {{
    {RepoType::Model, "model", "models", "", "models--"},
    {RepoType::Dataset, "dataset", "datasets", "datasets/", "datasets--"},
    {RepoType::Space, "space", "spaces", "spaces/", "spaces--"},
    {RepoType::Kernel, "kernel", "kernels", "kernels/", "kernels--"},
}};

const Names& names(RepoType type) noexcept { return kNames[static_cast<std::size_t>(type)]; }

}  // namespace

std::optional<RepoType> repo_type_from_name(std::string_view name) noexcept {
  for (const auto& n : kNames)
    if (n.name == name) return n.type;
  return std::nullopt;
}

std::optional<RepoType> repo_type_from_segment(std::string_view segment) noexcept {
  for (const auto& n : kNames)
    if (n.segment == segment) return n.type;
  return std::nullopt;
}

std::string_view to_string(RepoType type) noexcept { return names(type).name; }
std::string_view api_segment(RepoType type) noexcept { return names(type).segment; }
std::string_view url_prefix(RepoType type) noexcept { return names(type).url_prefix; }
std::string_view cache_prefix(RepoType type) noexcept { return names(type).cache_prefix; }

}  // namespace khub
