#include "khub/hub/repo.h"
#include "khub/base/url.h"

#include <cctype>

namespace khub::hub {

Expected<RepoRef> make_repo(std::string_view repo_id, RepoType type) {
  auto bad = [&](std::string_view why) {
    return Error(ErrorCode::InvalidArgument, "invalid repo id '" + std::string(repo_id) + "': " + std::string(why),
                 "use the form namespace/name, e.g. kernels-community/relu");
  };
  auto slash = repo_id.find('/');
  if (slash == std::string_view::npos || repo_id.find('/', slash + 1) != std::string_view::npos)
    return bad("expected exactly one '/'");
  for (auto part : {repo_id.substr(0, slash), repo_id.substr(slash + 1)}) {
    if (part.empty()) return bad("empty namespace or name");
    if (part == "." || part == ".." || part.find("..") != std::string_view::npos || part.front() == '.')
      return bad("'.' or '..' is not allowed");
    for (unsigned char c : part) {
      if (c >= 0x80) return bad("only ASCII letters, digits, '-', '_' and '.' are allowed");
      if (!std::isalnum(c) && c != '-' && c != '_' && c != '.')
        return bad(std::string("character '") + static_cast<char>(c) + "' is not allowed");
    }
    if (!is_valid_repo_name(part))
      return bad("names are 1-96 characters, without '--' and not starting or ending with '-' or '.'");
  }
  return RepoRef{type, std::string(repo_id)};
}

Expected<RepoType> parse_repo_type(std::string_view text) {
  if (text == "kernel" || text == "kernels") return RepoType::Kernel;
  if (text == "model" || text == "models") return RepoType::Model;
  return Error(ErrorCode::InvalidArgument, "unknown repo type '" + std::string(text) + "'",
               "use --repo-type kernel or --repo-type model");
}


std::string repo_folder_name(const RepoRef& repo) {
  std::string out(cache_prefix(repo.type));
  for (char c : repo.id) {
    if (c == '/') out += "--";
    else out.push_back(c);
  }
  return out;
}

std::string encode_segment(std::string_view text) { return percent_encode(text); }

std::string encode_path(std::string_view path) { return percent_encode(path, /*keep_slash=*/true); }

std::string resolve_url(std::string_view endpoint, const RepoRef& repo, std::string_view revision,
                        std::string_view path) {
  std::string url(endpoint);
  url += '/';
  url += url_prefix(repo.type);
  url += repo.id + "/resolve/" + encode_segment(revision) + "/" + encode_path(path);
  return url;
}

std::string api_url(std::string_view endpoint, const RepoRef& repo, std::string_view suffix) {
  std::string url(endpoint);
  url += "/api/";
  url += api_segment(repo.type);
  url += "/" + repo.id;
  url += suffix;
  return url;
}

bool is_safe_repo_path(std::string_view path) noexcept {
  if (path.empty() || path.front() == '/') return false;
  if (path.find('\\') != std::string_view::npos || path.find('\0') != std::string_view::npos) return false;
  std::size_t start = 0;
  while (true) {
    auto slash = path.find('/', start);
    auto part = path.substr(start, slash == std::string_view::npos ? path.npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

}  // namespace khub::hub
