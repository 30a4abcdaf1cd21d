// trees/<commit>.json: huggingface_hub's cached tree listing (docs/protocol.md, Cache layout).
#include "khub/hub/cache_tree.h"

#include <algorithm>

#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/json/fields.h"

namespace khub::hub {
namespace {

using OrderedJson = nlohmann::ordered_json;
using json_fields::Json;

constexpr int kFormatVersion = 1;

bool is_xet_hash(std::string_view s) { return s.size() == 64 && is_hex(s); }

// A value that may be absent or null (Python's None) reads as "", else it must be a string.
std::optional<std::string> optional_text(const Json& info, const char* key) {
  const Json& f = json_fields::field(info, key);
  if (f.is_null()) return std::string();
  if (!f.is_string()) return std::nullopt;
  return f.get<std::string>();
}

std::optional<TreeEntry> parse_entry(const std::string& path, const Json& info) {
  const Json& size = json_fields::field(info, "size");
  const Json& lfs_size = json_fields::field(info, "lfs_size");
  auto lfs_sha256 = optional_text(info, "lfs_sha256");
  auto xet_hash = optional_text(info, "xet_hash");
  if (!is_safe_repo_path(path) || !size.is_number_unsigned() || !lfs_sha256 || !xet_hash ||
      !(lfs_size.is_null() || lfs_size.is_number_unsigned()))
    return std::nullopt;
  TreeEntry e;
  e.path = path;
  e.oid = json_fields::text(info, "blob_id");
  e.size = (lfs_size.is_null() ? size : lfs_size).get<std::uint64_t>();  // khub's size is the real one
  e.lfs_oid = std::move(*lfs_sha256);
  e.xet_hash = std::move(*xet_hash);
  // The blob name is what khub checks a file against: only a sha1 or sha256 can be checked.
  if (!is_commit_hash(e.oid) || !(e.lfs_oid.empty() || (e.lfs_oid.size() == 64 && is_hex(e.lfs_oid))) ||
      !(e.xet_hash.empty() || is_xet_hash(e.xet_hash)))
    return std::nullopt;
  return e;
}

Error incomplete_snapshot(const RepoRef& repo, std::string_view commit, const std::vector<std::string>& missing) {
  std::string sample;
  for (std::size_t i = 0; i < missing.size() && i < 3; ++i) sample += (i ? ", " : "") + missing[i];
  if (missing.size() > 3) sample += ", ... (" + std::to_string(missing.size() - 3) + " more)";
  return Error(ErrorCode::OfflineMiss,
               "the cached snapshot of " + repo.id + " (commit " + std::string(commit) + ") is incomplete: " +
                   std::to_string(missing.size()) + " file(s) of its tree listing are missing (" + sample +
                   ") and Hugging Face Hub is in offline mode",
               "download it once while online (`khub download " + repo.id + " --all --revision " +
                   std::string(commit) + "`), or unset HF_HUB_OFFLINE");
}

}  // namespace

std::string tree_listing_json(const std::vector<TreeEntry>& entries) {
  std::vector<const TreeEntry*> files;
  for (const auto& e : entries)
    if (!e.directory) files.push_back(&e);
  std::sort(files.begin(), files.end(), [](const TreeEntry* a, const TreeEntry* b) { return a->path < b->path; });
  // Keys in huggingface_hub's order (ordered_json keeps insertion order; json would sort them).
  OrderedJson listed = OrderedJson::object();
  for (const TreeEntry* f : files) {
    OrderedJson info = OrderedJson::object();
    info["size"] = f->size;
    info["blob_id"] = f->oid;
    if (!f->lfs_oid.empty()) {
      info["lfs_sha256"] = f->lfs_oid;
      info["lfs_size"] = f->size;  // the Hub lists an LFS file's size at the top and in lfs.size alike
    }
    if (!f->xet_hash.empty()) info["xet_hash"] = f->xet_hash;
    listed[f->path] = std::move(info);
  }
  OrderedJson doc = OrderedJson::object();
  doc["format_version"] = kFormatVersion;
  doc["files"] = std::move(listed);
  // Python's json.dump(indent=1): ", " between items becomes ",\n", ": " after keys, ASCII only.
  return doc.dump(1, ' ', true, OrderedJson::error_handler_t::replace);
}

Status write_tree_listing(const CacheLayout& cache, const RepoRef& repo, std::string_view commit,
                          const std::vector<TreeEntry>& entries) {
  if (!(commit.size() == 40 && is_hex(commit)))
    return Error(ErrorCode::Protocol, "refusing to cache a tree listing for '" + std::string(commit) +
                                          "': not a commit hash");
  for (const auto& e : entries)
    if (!e.directory && !e.xet_hash.empty() && !is_xet_hash(e.xet_hash)) return {};
  return write_file_atomic(cache.tree_listing(repo, commit), tree_listing_json(entries), 0644,
                           cache.staging_dir(repo));
}

std::optional<std::vector<TreeEntry>> read_tree_listing(const CacheLayout& cache, const RepoRef& repo,
                                                        std::string_view commit) {
  if (!(commit.size() == 40 && is_hex(commit))) return std::nullopt;
  auto text = read_file(cache.tree_listing(repo, commit));
  if (!text) return std::nullopt;
  const Json doc = json_fields::parse_untrusted(*text);
  const Json& version = json_fields::field(doc, "format_version");
  const Json& files = json_fields::field(doc, "files");
  // Another format_version (a newer client's) is ignored, as huggingface_hub ignores it.
  if (!version.is_number_integer() || version.get<std::int64_t>() != kFormatVersion || !files.is_object())
    return std::nullopt;
  std::vector<TreeEntry> out;
  out.reserve(files.size());
  for (const auto& [path, info] : files.items()) {
    auto entry = parse_entry(path, info);
    if (!entry) return std::nullopt;
    out.push_back(std::move(*entry));
  }
  return out;
}

Expected<std::vector<std::string>> offline_snapshot_files(const CacheLayout& cache, const RepoRef& repo,
                                                          std::string_view commit) {
  KHUB_TRY(auto cached, cached_snapshot_files(cache, repo, commit));
  auto listing = read_tree_listing(cache, repo, commit);
  if (!listing) return cached;  // without a listing nobody can tell what is missing
  std::vector<std::string> files, missing;
  for (const auto& e : *listing) {
    files.push_back(e.path);
    if (!std::binary_search(cached.begin(), cached.end(), e.path)) missing.push_back(e.path);
  }
  if (!missing.empty()) return incomplete_snapshot(repo, commit, missing);
  return files;
}

}  // namespace khub::hub
