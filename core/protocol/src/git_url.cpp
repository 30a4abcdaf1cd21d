// Git URL rule of build.toml / metadata.json `upstream` and `source`, as kernels-data checks it.
#include <algorithm>
#include <array>

#include "khub/protocol/metadata.h"

namespace khub::protocol {

Status validate_git_url(std::string_view url) {
  static constexpr std::array<std::string_view, 7> kSchemes = {"https", "http", "git", "ssh",
                                                               "git+ssh", "git+https", "git+http"};
  auto sep = url.find("://");
  if (sep != std::string_view::npos) {
    auto scheme = url.substr(0, sep);
    if (std::find(kSchemes.begin(), kSchemes.end(), scheme) == kSchemes.end()) {
      return Error(ErrorCode::InvalidMetadata,
                   "unsupported scheme `" + std::string(scheme) + "` in git URL `" + std::string(url) +
                       "`, expected one of: https, http, git, ssh, git+ssh, git+https, git+http");
    }
    if (sep + 3 >= url.size()) {
      return Error(ErrorCode::InvalidMetadata, "invalid git URL `" + std::string(url) + "`: no host");
    }
    return {};
  }
  // scp-like user@host:path, path not starting with '/'.
  auto at = url.find('@');
  auto colon = url.find(':');
  if (at != std::string_view::npos && at > 0 && colon != std::string_view::npos && colon > at + 1 &&
      colon + 1 < url.size() && url[colon + 1] != '/') {
    return {};
  }
  return Error(ErrorCode::InvalidMetadata, "invalid git URL `" + std::string(url) +
                                               "`: expected a URL with a scheme or `user@host:path`");
}

}  // namespace khub::protocol
