#include "tree_hash.h"

#include <algorithm>

#include "khub/base/hash.h"

namespace khub::localhub {

std::string lfs_pointer(std::string_view sha256, std::uint64_t size) {
  return "version https://git-lfs.github.com/spec/v1\noid sha256:" + std::string(sha256) + "\nsize " +
         std::to_string(size) + "\n";
}

namespace {
struct Child {
  bool is_dir = false;
  std::string name;
  std::string oid;  // hex
};

std::string parent_of(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

std::string base_of(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string git_object_sha1(std::string_view type, std::string_view body) {
  Hasher h(HashAlgorithm::Sha1);
  h.update(std::string(type) + " " + std::to_string(body.size()) + std::string(1, '\0'));
  h.update(body);
  return to_hex(h.finish());
}
}  // namespace

std::map<std::string, std::string> directory_oids(const std::vector<FileEntry>& files) {
  // children[dir][git sort key] — git orders a directory as if its name ended in '/'.
  std::map<std::string, std::map<std::string, Child>> children;
  children[""];
  for (const auto& f : files) {
    children[parent_of(f.path)][base_of(f.path)] = Child{false, base_of(f.path), f.git_oid};
    for (std::string dir = parent_of(f.path); !dir.empty(); dir = parent_of(dir)) {
      auto& siblings = children[parent_of(dir)];
      siblings.emplace(base_of(dir) + "/", Child{true, base_of(dir), {}});
      children[dir];
    }
  }
  std::vector<std::string> dirs;
  for (const auto& [dir, _] : children) dirs.push_back(dir);
  auto depth = [](const std::string& d) { return d.empty() ? -1 : static_cast<int>(std::count(d.begin(), d.end(), '/')); };
  std::stable_sort(dirs.begin(), dirs.end(), [&](const auto& a, const auto& b) { return depth(a) > depth(b); });

  std::map<std::string, std::string> oids;
  for (const auto& dir : dirs) {
    std::string body;
    for (const auto& [key, child] : children[dir]) {
      std::string oid = child.is_dir ? oids[dir.empty() ? child.name : dir + "/" + child.name] : child.oid;
      body += child.is_dir ? "40000 " : "100644 ";
      body += child.name;
      body.push_back('\0');
      auto raw = from_hex(oid);
      body.append(reinterpret_cast<const char*>(raw.data()), raw.size());
    }
    oids[dir] = git_object_sha1("tree", body);
  }
  return oids;
}

std::string commit_oid(std::string_view tree, std::string_view parent, std::string_view summary,
                       std::string_view description, std::int64_t when) {
  std::string body = "tree " + std::string(tree) + "\n";
  if (!parent.empty()) body += "parent " + std::string(parent) + "\n";
  std::string who = "khub <khub@localhost> " + std::to_string(when) + " +0000\n";
  body += "author " + who + "committer " + who + "\n" + std::string(summary) + "\n";
  if (!description.empty()) body += "\n" + std::string(description) + "\n";
  return git_object_sha1("commit", body);
}

std::string check_repo_path(std::string_view path) {
  if (path.empty()) return "empty path";
  if (path.size() > 1024) return "path longer than 1024 bytes";
  if (path.front() == '/') return "absolute path";
  for (unsigned char c : path) {
    if (c == '\0') return "NUL byte in path";
    if (c < 0x20 || c == 0x7f) return "control character in path";
  }
  // A backslash is an ordinary character of a git file name (the Hub keeps `a/..\b`), but a path
  // that begins by leaving the repo root in Windows spelling (`..\x`) is refused, as the Hub does.
  if (path.starts_with("..\\")) return "path starts with '..\\'";
  size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    auto seg = path.substr(start, end - start);
    if (seg.empty()) return "empty path segment";
    if (seg == "." || seg == "..") return "'" + std::string(seg) + "' segment in path";
    if (seg == ".git") return "'.git' segment in path";
    start = end + 1;
  }
  return {};
}

}  // namespace khub::localhub
