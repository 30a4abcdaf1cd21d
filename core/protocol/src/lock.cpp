#include "khub/protocol/lock.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/json/fields.h"

namespace khub::protocol {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

Error lock_error(std::size_t index, const std::string& what) {
  return Error(ErrorCode::InvalidMetadata, "kernels.lock entry " + std::to_string(index + 1) + ": " + what);
}

Expected<std::string> string_key(const OrderedJson& obj, std::string_view key, std::size_t index) {
  auto it = obj.find(key);
  if (it == obj.end()) return lock_error(index, "missing key `" + std::string(key) + "`");
  if (!it->is_string()) return lock_error(index, "`" + std::string(key) + "` must be a string");
  return it->get<std::string>();
}

Expected<LegacyLock> parse_legacy_entry(const OrderedJson& e, std::size_t index) {
  LegacyLock lock;
  KHUB_TRY(lock.repo_id, string_key(e, "repo_id", index));
  KHUB_TRY(lock.sha, string_key(e, "sha", index));
  auto variants = e.find("variants");
  if (variants == e.end()) return lock_error(index, "missing key `variants`");
  if (!variants->is_object()) return lock_error(index, "`variants` must be an object");
  for (const auto& [name, v] : variants->items()) {
    if (!v.is_object()) return lock_error(index, "variant `" + name + "` must be an object");
    LockedVariant lv;
    for (const auto& [k, val] : v.items()) {
      if (k != "hash" && k != "hash_type") return lock_error(index, "variant `" + name + "`: unknown key `" + k + "`");
      if (!val.is_string()) return lock_error(index, "variant `" + name + "`: `" + k + "` must be a string");
    }
    KHUB_TRY(lv.hash, string_key(v, "hash", index));
    if (v.contains("hash_type")) lv.hash_type = v["hash_type"].get<std::string>();
    lock.variants.emplace_back(name, std::move(lv));
  }
  return lock;
}

Status check_only_keys(const OrderedJson& obj, std::initializer_list<std::string_view> keys, std::size_t index,
                       std::string_view where) {
  for (const auto& [k, v] : obj.items()) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
      return lock_error(index, "unknown key `" + k + "` in `" + std::string(where) + "`");
    }
  }
  return {};
}

Expected<KernelLock> parse_current_entry(const OrderedJson& e, std::size_t index) {
  KHUB_CHECK(check_only_keys(e, {"dependency", "lock"}, index, "entry"));
  auto dep = e.find("dependency");
  auto lk = e.find("lock");
  if (dep == e.end() || !dep->is_object()) return lock_error(index, "missing object `dependency`");
  if (lk == e.end() || !lk->is_object()) return lock_error(index, "missing object `lock`");
  KHUB_CHECK(check_only_keys(*dep, {"repo-id", "version", "revision"}, index, "dependency"));
  KHUB_CHECK(check_only_keys(*lk, {"commit", "hash"}, index, "lock"));
  KernelLock out;
  KHUB_TRY(out.repo_id, string_key(*dep, "repo-id", index));
  if (dep->contains("version") == dep->contains("revision")) {
    return lock_error(index, "dependency needs exactly one of `version` or `revision`");
  }
  if (dep->contains("version")) {
    if (!(*dep)["version"].is_number_unsigned()) return lock_error(index, "`version` must be an integer >= 0");
    out.version = (*dep)["version"].get<std::uint64_t>();
  } else {
    KHUB_TRY(out.revision, string_key(*dep, "revision", index));
  }
  KHUB_TRY(out.commit, string_key(*lk, "commit", index));
  if (!is_commit_hash(out.commit)) {
    return lock_error(index, "invalid commit `" + out.commit + "`: expected 40 or 64 hex characters");
  }
  if (lk->contains("hash")) {
    KHUB_TRY(out.hash, string_key(*lk, "hash", index));
  }
  return out;
}

bool lock_less(const KernelLock& a, const KernelLock& b) {
  if (a.repo_id != b.repo_id) return a.repo_id < b.repo_id;
  if (a.version.has_value() != b.version.has_value()) return a.version.has_value();
  if (a.version) return *a.version < *b.version;
  return a.revision < b.revision;
}

}  // namespace

std::optional<std::string> LockFile::commit_for(std::string_view repo_id) const {
  for (const auto& l : legacy) {
    if (l.repo_id == repo_id) return l.sha;
  }
  for (const auto& l : current) {
    if (l.repo_id == repo_id) return l.commit;
  }
  return std::nullopt;
}

Expected<LockFile> parse_lock_file(std::string_view json) {
  OrderedJson doc = json_fields::parse_untrusted<OrderedJson>(json);
  if (doc.is_discarded()) return Error(ErrorCode::InvalidMetadata, "kernels.lock is not valid JSON");
  if (!doc.is_array()) return Error(ErrorCode::InvalidMetadata, "kernels.lock must be a JSON array");
  LockFile out;
  if (!doc.empty() && doc[0].is_object() && doc[0].contains("repo_id")) out.format = LockFormat::Legacy;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    if (!doc[i].is_object()) return lock_error(i, "must be an object");
    if (out.format == LockFormat::Legacy) {
      KHUB_TRY(auto e, parse_legacy_entry(doc[i], i));
      out.legacy.push_back(std::move(e));
    } else {
      KHUB_TRY(auto e, parse_current_entry(doc[i], i));
      out.current.push_back(std::move(e));
    }
  }
  std::stable_sort(out.current.begin(), out.current.end(), lock_less);
  for (std::size_t i = 1; i < out.current.size(); ++i) {
    const auto& a = out.current[i - 1];
    const auto& b = out.current[i];
    if (a.repo_id == b.repo_id && a.version == b.version && a.revision == b.revision) {
      return Error(ErrorCode::InvalidMetadata, "duplicate dependency: " + a.repo_id);
    }
  }
  return out;
}

Expected<LockFile> read_lock_file(const std::filesystem::path& path) {
  KHUB_TRY(auto text, read_file(path));
  return parse_lock_file(text);
}

std::string serialize_legacy_locks(const std::vector<LegacyLock>& locks) {
  OrderedJson arr = OrderedJson::array();
  for (const auto& l : locks) {
    OrderedJson e = OrderedJson::object();
    e["repo_id"] = l.repo_id;
    e["sha"] = l.sha;
    OrderedJson vs = OrderedJson::object();
    for (const auto& [name, v] : l.variants) {
      OrderedJson o = OrderedJson::object();
      o["hash"] = v.hash;
      o["hash_type"] = v.hash_type;
      vs[name] = std::move(o);
    }
    e["variants"] = std::move(vs);
    arr.push_back(std::move(e));
  }
  return arr.dump(2, ' ', /*ensure_ascii=*/true, OrderedJson::error_handler_t::replace);
}

Expected<std::string> serialize_kernel_locks(std::vector<KernelLock> locks) {
  std::stable_sort(locks.begin(), locks.end(), lock_less);
  OrderedJson arr = OrderedJson::array();
  for (std::size_t i = 0; i < locks.size(); ++i) {
    const auto& l = locks[i];
    if (i > 0 && l.repo_id == locks[i - 1].repo_id && l.version == locks[i - 1].version &&
        l.revision == locks[i - 1].revision) {
      return Error(ErrorCode::InvalidArgument, "duplicate dependency: " + l.repo_id);
    }
    OrderedJson dep = OrderedJson::object();
    dep["repo-id"] = l.repo_id;
    if (l.version) dep["version"] = *l.version;
    if (l.revision) dep["revision"] = *l.revision;
    OrderedJson lk = OrderedJson::object();
    lk["commit"] = l.commit;
    if (l.hash) lk["hash"] = *l.hash;
    OrderedJson e = OrderedJson::object();
    e["dependency"] = std::move(dep);
    e["lock"] = std::move(lk);
    arr.push_back(std::move(e));
  }
  return arr.dump(2, ' ', false, OrderedJson::error_handler_t::replace);
}

Expected<std::string> git_lfs_concat_hash(std::vector<std::pair<std::string, std::string>> files) {
  std::sort(files.begin(), files.end());
  Hasher hasher(HashAlgorithm::Sha256);
  for (const auto& [name, hex] : files) {
    auto raw = from_hex(hex);
    if (raw.size() != 20 && raw.size() != 32) {
      return Error(ErrorCode::InvalidMetadata, "invalid blob id for " + name + ": " + hex);
    }
    hasher.update(name);
    hasher.update(std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()));
  }
  return "sha256-" + to_hex(hasher.finish());
}

Expected<std::vector<std::pair<std::string, LockedVariant>>> lock_variants(const std::vector<TreeFile>& tree) {
  std::vector<const TreeFile*> sorted;
  for (const auto& f : tree) sorted.push_back(&f);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->path < b->path; });
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> files;
  for (const auto* f : sorted) {
    const auto& p = f->path;
    if (!p.starts_with("build/torch") || p.ends_with(".pyc")) continue;
    if (p.find("/__pycache__/") != std::string::npos || p.ends_with("/__pycache__")) continue;
    auto slash = p.find('/', 6);
    if (slash == std::string::npos) continue;  // a file directly under build/
    std::string variant = p.substr(6, slash - 6);
    std::string name = p.substr(slash + 1);
    std::string hash = f->lfs_oid ? *f->lfs_oid : f->oid;
    if (hash.empty()) return Error(ErrorCode::InvalidMetadata, "Cannot get blob ID for " + p);
    if (!files.contains(variant)) order.push_back(variant);
    files[variant].emplace_back(std::move(name), std::move(hash));
  }
  std::vector<std::pair<std::string, LockedVariant>> out;
  for (const auto& v : order) {
    KHUB_TRY(auto h, git_lfs_concat_hash(files[v]));
    out.emplace_back(v, LockedVariant{std::move(h), "git_lfs_concat"});
  }
  return out;
}

}  // namespace khub::protocol
