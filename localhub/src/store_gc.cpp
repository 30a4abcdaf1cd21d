// RepoStore::collect_garbage: trees no commit uses, blobs no tree uses, abandoned uploads.
#include <algorithm>
#include <unordered_set>

#include "khub/localhub/store.h"
#include "store_impl.h"

namespace khub::localhub {
namespace fs = std::filesystem;

namespace {

// The newest modification time of a file, or of a folder and what it holds.
fs::file_time_type last_change(const fs::path& path) {
  std::error_code ec;
  auto newest = fs::last_write_time(path, ec);
  if (fs::is_directory(path, ec))
    for (const auto& e : fs::recursive_directory_iterator(path, ec)) newest = std::max(newest, e.last_write_time(ec));
  return newest;
}

Status remove_path(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return Error(ErrorCode::Io, "cannot remove " + path.string() + ": " + ec.message());
  return {};
}

}  // namespace

Expected<GcReport> RepoStore::collect_garbage(const GcOptions& options) {
  GcReport report;
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);  // held to the end: commits in any process wait, then re-check blobs
  KHUB_CHECK(tx.begin());
  impl_->hook("gc-locked");

  constexpr std::string_view kUnusedTrees = "FROM trees WHERE oid NOT IN (SELECT tree_oid FROM commits)";
  db::Statement count(conn.get(), "SELECT count(*) " + std::string(kUnusedTrees));
  if (!count.step()) return count.error() ? *count.error() : Error(ErrorCode::Io, "cannot count unused trees");
  report.trees_removed = static_cast<std::uint64_t>(count.integer(0));
  if (!options.dry_run && report.trees_removed > 0) {
    KHUB_CHECK(conn->exec("DELETE FROM tree_files WHERE tree_oid NOT IN (SELECT tree_oid FROM commits);"));
    KHUB_CHECK(conn->exec("DELETE " + std::string(kUnusedTrees) + ";"));
  }

  if (!options.dry_run) {  // an upload's grant lasts as long as its blob is kept unreferenced
    db::Statement prune(conn.get(), "DELETE FROM lfs_grants WHERE created_at < ?1");
    prune.bind(1, std::chrono::duration_cast<std::chrono::seconds>(
                      (std::chrono::system_clock::now() - options.grace).time_since_epoch())
                      .count());
    KHUB_CHECK(prune.run());
  }

  {  // Xet files and xorbs: what goes here leaves its xorbs' blobs unreferenced below
    const auto cutoff = std::chrono::duration_cast<std::chrono::seconds>(
                            (std::chrono::system_clock::now() - options.grace).time_since_epoch())
                            .count();
    KHUB_CHECK(collect_xet_garbage(*conn, cutoff, report));  // a dry run rolls these deletes back
  }

  std::unordered_set<std::string> referenced;
  db::Statement used(conn.get(),
                     "SELECT DISTINCT sha256 FROM tree_files WHERE tree_oid IN (SELECT tree_oid FROM commits)");
  while (used.step()) referenced.insert(used.text(0));
  if (used.error()) return *used.error();
  db::Statement xorbs(conn.get(), "SELECT blob_sha256 FROM xet_xorbs");
  while (xorbs.step()) referenced.insert(xorbs.text(0));
  if (xorbs.error()) return *xorbs.error();

  const auto cutoff = fs::file_time_type::clock::now() - options.grace;
  std::error_code ec;
  for (const auto& prefix : fs::directory_iterator(impl_->root / "blobs", ec)) {
    for (const auto& blob : fs::directory_iterator(prefix.path(), ec)) {
      if (referenced.count(blob.path().filename().string())) {
        ++report.blobs_kept;
      } else if (blob.last_write_time(ec) > cutoff) {
        ++report.blobs_kept_young;
      } else {
        ++report.blobs_removed;
        report.bytes_removed += blob.file_size(ec);
        if (!options.dry_run) KHUB_CHECK(remove_path(blob.path()));
      }
    }
  }
  for (const auto& folder : {impl_->blobs.upload_dir(), impl_->blobs.tmp_dir()}) {
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      if (last_change(entry.path()) > cutoff) continue;
      ++report.uploads_removed;
      if (!options.dry_run) KHUB_CHECK(remove_path(entry.path()));
    }
  }
  if (!options.dry_run) KHUB_CHECK(tx.commit());  // a dry run rolls back on leaving
  return report;
}

}  // namespace khub::localhub
