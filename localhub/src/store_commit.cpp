// RepoStore::commit and the tree/commit rows it writes.
#include <chrono>
#include <map>

#include "khub/base/hash.h"
#include "khub/localhub/store.h"
#include "store_impl.h"
#include "tree_hash.h"

namespace khub::localhub {

namespace {
std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The file entry an AddFile op will create; checks that its blob is stored with the claimed size.
Expected<FileEntry> entry_for(BlobStore& blobs, const CommitOp& op) {
  auto size = blobs.size_of(op.sha256);
  if (!size) {
    if (op.lfs) {
      return Error(ErrorCode::Integrity,
                   "Your push was rejected because an LFS pointer pointed to a file that does not exist. "
                   "Offending file: - " + op.path);
    }
    return Error(ErrorCode::Integrity, "content of " + op.path + " is not stored");
  }
  if (*size != op.size) {
    return Error(ErrorCode::Integrity, op.path + ": size mismatch: expected " + std::to_string(op.size) +
                                           " bytes, stored object has " + std::to_string(*size));
  }
  FileEntry e{op.path, op.size, {}, op.sha256, op.lfs};
  if (op.lfs) {
    e.git_oid = git_blob_sha1_hex(lfs_pointer(op.sha256, op.size));
  } else {
    KHUB_TRY(e.git_oid, git_blob_sha1_file(blobs.path_of(op.sha256)));
  }
  return e;
}

// Removes every file under folder `path`; false when there was none.
bool erase_folder(std::map<std::string, FileEntry>& files, std::string prefix) {
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  prefix += '/';
  auto it = files.lower_bound(prefix);
  bool any = false;
  while (it != files.end() && it->first.starts_with(prefix)) {
    it = files.erase(it);
    any = true;
  }
  return any;
}

Status apply_op(std::map<std::string, FileEntry>& files, const CommitOp& op, const FileEntry* added) {
  switch (op.kind) {
    case OpKind::AddFile:
      files[op.path] = *added;
      return {};
    case OpKind::RenameFile: {
      auto it = files.find(op.from);
      if (it == files.end()) return Error(ErrorCode::EntryNotFound, "A file with this name doesn't exist: " + op.from);
      FileEntry moved = it->second;
      files.erase(it);
      moved.path = op.path;
      files[op.path] = std::move(moved);
      return {};
    }
    case OpKind::DeleteFile:
      if (files.erase(op.path) == 0 && !erase_folder(files, op.path)) {  // the Hub deletes a folder named so
        return Error(ErrorCode::EntryNotFound, "A file with this name doesn't exist: " + op.path);
      }
      return {};
    case OpKind::DeleteFolder:
      if (!erase_folder(files, op.path)) {
        return Error(ErrorCode::EntryNotFound, "A folder with this name doesn't exist: " + op.path);
      }
      return {};
  }
  return {};
}

// A path may not be both a file and a folder.
Status check_no_file_folder_clash(const std::map<std::string, FileEntry>& files) {
  for (const auto& [path, _] : files) {
    for (auto slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      if (files.count(path.substr(0, slash))) {
        return Error(ErrorCode::InvalidArgument, "'" + path + "' needs '" + path.substr(0, slash) +
                                                     "' to be a folder, but it is a file");
      }
    }
  }
  return {};
}
}  // namespace

Expected<CommitRecord> insert_commit(db::Connection& conn, std::int64_t repo_rowid,
                                     const std::vector<FileEntry>& files, std::string_view parent,
                                     std::string_view summary, std::string_view description, std::string_view author,
                                     std::int64_t created_at) {
  auto dirs = directory_oids(files);
  CommitRecord rec;
  rec.tree_oid = dirs[""];
  rec.parent = parent;
  rec.summary = summary;
  rec.description = description;
  rec.created_at = created_at != 0 ? created_at : now_seconds();
  rec.author = author;
  rec.oid = commit_oid(rec.tree_oid, parent, summary, description, rec.created_at);

  db::Statement tree(conn.get(), "INSERT OR IGNORE INTO trees(oid) VALUES(?1)");
  tree.bind(1, rec.tree_oid);
  KHUB_CHECK(tree.run());
  if (sqlite3_changes(conn.get()) > 0) {
    db::Statement one(conn.get(),
                      "INSERT INTO tree_files(tree_oid, path, size, git_oid, sha256, lfs) VALUES(?1,?2,?3,?4,?5,?6)");
    for (const auto& f : files) {
      one.reset();
      one.bind(1, rec.tree_oid).bind(2, f.path).bind(3, static_cast<std::int64_t>(f.size)).bind(4, f.git_oid);
      one.bind(5, f.sha256).bind(6, std::int64_t{f.lfs});
      KHUB_CHECK(one.run());
    }
  }
  db::Statement ins(conn.get(),
                    "INSERT OR IGNORE INTO commits(repo_id, oid, tree_oid, parent, summary, description, created_at, "
                    "author) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)");
  ins.bind(1, repo_rowid).bind(2, rec.oid).bind(3, rec.tree_oid).bind(4, parent).bind(5, summary);
  ins.bind(6, description).bind(7, rec.created_at).bind(8, author);
  KHUB_CHECK(ins.run());
  return rec;
}

Expected<CommitResult> RepoStore::commit(const RepoRecord& repo, std::string_view revision,
                                         const CommitRequest& request) {
  // Target ref: a branch, or an open pull request.
  RefKind kind = RefKind::Branch;
  std::string name(revision);
  if (name.starts_with("refs/heads/")) name = name.substr(11);
  if (name.starts_with("refs/pr/")) {
    kind = RefKind::PullRequest;
    name = name.substr(8);
  }
  if (request.summary.empty()) return Error(ErrorCode::InvalidArgument, "commit summary is empty");

  std::vector<std::optional<FileEntry>> added;
  for (const auto& op : request.ops) {
    std::string_view checked = op.path;
    while (op.kind == OpKind::DeleteFolder && checked.ends_with("/")) checked.remove_suffix(1);
    if (auto why = check_repo_path(checked); !why.empty()) {
      return Error(ErrorCode::InvalidArgument, "invalid path '" + op.path + "': " + why);
    }
    if (op.kind == OpKind::RenameFile) {
      if (auto why = check_repo_path(op.from); !why.empty()) {
        return Error(ErrorCode::InvalidArgument, "invalid path '" + op.from + "': " + why);
      }
    }
    if (op.kind == OpKind::AddFile) {
      KHUB_TRY(auto e, entry_for(impl_->blobs, op));
      added.emplace_back(std::move(e));
    } else {
      added.emplace_back();
    }
  }
  impl_->hook("blobs-written");

  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);
  KHUB_CHECK(tx.begin());
  // Again inside the transaction: garbage collection deletes unreferenced blobs only while it holds
  // the write transaction, so a blob seen here stays until this commit references it.
  for (const auto& op : request.ops)
    if (op.kind == OpKind::AddFile && !impl_->blobs.contains(op.sha256))
      return Error(ErrorCode::Integrity, "content of " + op.path + " was removed before the commit; upload it again");
  KHUB_TRY(auto head, get_ref(*conn, repo.rowid, kind, name));
  if (head.empty()) return Error(ErrorCode::RevisionNotFound, "Invalid rev id: " + std::string(revision));
  if (!request.parent_commit.empty() && request.parent_commit != head) {
    return Error(ErrorCode::Conflict,
                 "The branch was updated since you opened this page. Please refresh and try again.");
  }
  CommitResult result;
  if (request.create_pr) {
    KHUB_TRY(result.pr_number, next_discussion_number(*conn, repo.rowid));
    kind = RefKind::PullRequest;
    name = std::to_string(result.pr_number);
    Discussion pr{result.pr_number, request.summary, request.description, request.author, true, "open", now_seconds()};
    pr.base_commit = head;
    KHUB_CHECK(insert_discussion(*conn, repo.rowid, pr));
  }

  db::Statement tree_of(conn.get(), "SELECT tree_oid FROM commits WHERE repo_id=?1 AND oid=?2");
  tree_of.bind(1, repo.rowid).bind(2, head);
  if (!tree_of.step()) return Error(ErrorCode::Io, "commit " + head + " has no tree");
  KHUB_TRY(auto current, load_tree(*conn, tree_of.text(0)));
  std::map<std::string, FileEntry> files;
  for (auto& f : current) files.emplace(f.path, std::move(f));
  for (size_t i = 0; i < request.ops.size(); ++i) {
    KHUB_CHECK(apply_op(files, request.ops[i], added[i] ? &*added[i] : nullptr));
  }
  KHUB_CHECK(check_no_file_folder_clash(files));
  std::vector<FileEntry> list;
  list.reserve(files.size());
  for (auto& [_, f] : files) list.push_back(std::move(f));

  KHUB_TRY(auto rec, insert_commit(*conn, repo.rowid, list, head, request.summary, request.description, request.author));
  KHUB_CHECK(put_ref(*conn, repo.rowid, kind, name, rec.oid));
  impl_->hook("in-transaction");
  KHUB_CHECK(tx.commit());
  result.oid = rec.oid;
  return result;
}

}  // namespace khub::localhub
