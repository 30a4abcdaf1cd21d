#include "khub/publish/upload_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "digest_claims.h"
#include "khub/base/hash.h"
#include "khub/protocol/digest.h"

namespace khub::publish {
namespace {

namespace fs = std::filesystem;

std::string variant_of(const std::string& path) {
  // build/<variant>/...
  if (!path.starts_with("build/")) return {};
  auto slash = path.find('/', 6);
  return slash == std::string::npos ? std::string() : path.substr(6, slash - 6);
}

void add_unless_same(BranchPlan& plan, const LocalFile& file, const std::map<std::string, const RemoteFile*>& remote) {
  auto it = remote.find(file.repo_path);
  if (it != remote.end() && has_same_content(file, *it->second)) {
    ++plan.unchanged;
    return;
  }
  if (it != remote.end() && it->second->xet_hash) plan.replaced_xet[file.repo_path] = *it->second;
  plan.adds.push_back(file);
}

}  // namespace

bool has_same_content(const LocalFile& local, const RemoteFile& remote) {
  if (remote.lfs_oid) return *remote.lfs_oid == local.sha256;
  return !remote.oid.empty() && remote.oid == local.git_sha1;
}

std::vector<BranchPlan> plan_upload(const PlanInput& in) {
  std::map<std::string, const RemoteFile*> remote_branch, remote_main;
  for (const auto& f : in.remote_branch) remote_branch[f.path] = &f;
  for (const auto& f : in.remote_main) remote_main[f.path] = &f;

  BranchPlan version{in.branch, {}, {}, 0, {}};
  std::set<std::string> uploading;
  for (const auto& f : in.benchmark_files) uploading.insert(f.repo_path);
  for (const auto& f : in.build_files) uploading.insert(f.repo_path);
  const std::set<std::string> pushed(in.variants.begin(), in.variants.end());

  for (const auto& [path, file] : remote_branch) {
    if (uploading.contains(path)) continue;
    if (path.starts_with("benchmarks/")) {
      // kernel-builder tests the file name alone, at any depth under benchmarks/.
      const std::string name = path.substr(path.rfind('/') + 1);
      bool is_benchmark = name.starts_with("benchmark") && name.ends_with(".py");
      if (in.new_branch || is_benchmark) version.deletes.push_back(path);
    } else if (path.starts_with("build/")) {
      if (in.new_branch || pushed.contains(variant_of(path))) version.deletes.push_back(path);
    }
  }
  for (const auto& f : in.benchmark_files) add_unless_same(version, f, remote_branch);
  for (const auto& f : in.build_files) add_unless_same(version, f, remote_branch);

  std::vector<BranchPlan> out;
  if (in.readme) {
    if (in.branch == "main") {
      add_unless_same(version, *in.readme, remote_branch);
    } else {
      BranchPlan main{"main", {}, {}, 0, {}};
      add_unless_same(main, *in.readme, remote_main);
      out.push_back(std::move(main));
    }
  }
  out.push_back(std::move(version));
  for (auto& p : out) {
    std::sort(p.adds.begin(), p.adds.end(), [](const auto& a, const auto& b) { return a.repo_path < b.repo_path; });
    std::sort(p.deletes.begin(), p.deletes.end());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.branch < b.branch; });
  return out;
}

Expected<LocalFile> hash_local_file(const fs::path& source, std::string repo_path) {
  LocalFile f;
  f.repo_path = std::move(repo_path);
  f.source = source;
  std::error_code ec;
  f.size = fs::file_size(source, ec);
  if (ec) return Error(ErrorCode::Io, "cannot read " + source.string() + ": " + ec.message());
  // The digest check has read the sha256 moments before (khub push): it is reused while the file is
  // as it was then.
  KHUB_TRY(auto sha, hash_file(source, HashAlgorithm::Sha256, HashReuse::Unchanged));
  f.sha256 = to_hex(sha);
  if (f.size <= kGitSha1MaxSize) {
    KHUB_TRY(f.git_sha1, git_blob_sha1_file(source));
  }
  return f;
}

Expected<LocalFiles> collect_local_files(const BuildTree& tree, bool digest_claims) {
  LocalFiles out;
  std::error_code ec;
  for (const auto& v : tree.variants) {
    protocol::DigestClaim claim;
    if (digest_claims) {
      if (auto m = read_variant_metadata(v); m && m->digest) claim = detail::claim_rule(v.path, *m->digest);
    }
    for (auto it = fs::recursive_directory_iterator(v.path, ec); it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (ec) return Error(ErrorCode::Io, "cannot read " + v.path.string() + ": " + ec.message());
      const std::string rel = it->path().lexically_relative(v.path).generic_string();
      if (it->is_directory() && it->path().filename() == "__pycache__") {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_symlink() && !fs::exists(it->path())) {
        return Error(ErrorCode::Io, "dangling symlink: " + it->path().string());
      }
      if (!it->is_regular_file() || protocol::is_bytecode_cache(rel)) continue;  // as the digest leaves them out
      if (auto claimed = claim ? claim(it->path(), rel) : std::nullopt) {
        LocalFile f{"build/" + v.name + "/" + rel, it->path(), it->file_size(ec), to_hex(*base64_decode(*claimed)), {},
                    true};
        if (ec) return Error(ErrorCode::Io, "cannot read " + it->path().string() + ": " + ec.message());
        out.build.push_back(std::move(f));
        continue;
      }
      KHUB_TRY(auto f, hash_local_file(it->path(), "build/" + v.name + "/" + rel));
      out.build.push_back(std::move(f));
    }
    if (ec) return Error(ErrorCode::Io, "cannot read " + v.path.string() + ": " + ec.message());
  }
  std::sort(out.build.begin(), out.build.end(), [](const auto& a, const auto& b) { return a.repo_path < b.repo_path; });
  const fs::path bench = tree.kernel_dir / "benchmarks";
  if (fs::is_directory(bench, ec)) {
    for (const auto& e : fs::directory_iterator(bench, ec)) {
      auto name = e.path().filename().string();
      if (e.is_regular_file() && name.starts_with("benchmark") && name.ends_with(".py")) {
        KHUB_TRY(auto f, hash_local_file(e.path(), "benchmarks/" + name));
        out.benchmarks.push_back(std::move(f));
      }
    }
    std::sort(out.benchmarks.begin(), out.benchmarks.end(),
              [](const auto& a, const auto& b) { return a.repo_path < b.repo_path; });
  }
  if (fs::is_regular_file(tree.variants_dir / "CARD.md", ec)) {
    KHUB_TRY(out.readme, hash_local_file(tree.variants_dir / "CARD.md", "README.md"));
  }
  return out;
}

}  // namespace khub::publish
