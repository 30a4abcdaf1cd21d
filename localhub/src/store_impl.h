#pragma once
// Private parts of RepoStore shared by store.cpp (repos, refs, reads) and store_commit.cpp.
#include <mutex>

#include "khub/localhub/store.h"
#include "sqlite_db.h"

namespace khub::localhub {

struct RepoStore::Impl {
  std::filesystem::path root;
  StoreOptions options;
  BlobStore blobs;
  std::unique_ptr<db::Pool> pool;
  std::mutex write_mutex;  // one writer at a time; readers run in parallel (WAL)

  Impl(std::filesystem::path r, StoreOptions o) : root(r), options(std::move(o)), blobs(r) {}
  void hook(std::string_view stage) const {
    if (options.test_hook) options.test_hook(stage);
  }
};

[[nodiscard]] std::string_view ref_kind_name(RefKind kind);

/// A repos row selected as "id, type, ns, name, private, created_at, gated".
[[nodiscard]] RepoRecord read_repo(const db::Statement& st);

/// Inserts the tree of `files` (if new) and a commit row dated `created_at` (0: now); returns the
/// commit. Call inside a transaction.
[[nodiscard]] Expected<CommitRecord> insert_commit(db::Connection& conn, std::int64_t repo_rowid,
                                                   const std::vector<FileEntry>& files, std::string_view parent,
                                                   std::string_view summary, std::string_view description,
                                                   std::string_view author, std::int64_t created_at = 0);

/// The next number of the repo's shared discussion / pull request counter. Call inside a transaction.
[[nodiscard]] Expected<int> next_discussion_number(db::Connection& conn, std::int64_t repo_rowid);
/// Records a discussion row. Call inside a transaction.
[[nodiscard]] Status insert_discussion(db::Connection& conn, std::int64_t repo_rowid, const Discussion& d);

/// Sets (insert or replace) a ref. Call inside a transaction.
[[nodiscard]] Status put_ref(db::Connection& conn, std::int64_t repo_rowid, RefKind kind, std::string_view name,
                             std::string_view commit);

/// Looks a ref up; empty string when absent.
[[nodiscard]] Expected<std::string> get_ref(db::Connection& conn, std::int64_t repo_rowid, RefKind kind,
                                            std::string_view name);

[[nodiscard]] Expected<std::vector<FileEntry>> load_tree(db::Connection& conn, std::string_view tree_oid);

/// Creates the Xet tables (store_xet.cpp) when absent.
[[nodiscard]] Status create_xet_tables(db::Connection& conn);

/// Deletes Xet files no commit uses and xorbs no remaining file uses, each older than `cutoff`
/// (unix seconds); counts the xorbs in `report`. Call inside collect_garbage's transaction.
[[nodiscard]] Status collect_xet_garbage(db::Connection& conn, std::int64_t cutoff, GcReport& report);

}  // namespace khub::localhub
