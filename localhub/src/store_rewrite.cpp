// Renames and history rewrites: move_repo (with the old id redirecting), super-squash, and the
// permanent deletion of LFS files (every ref's history rewritten without them).
#include <map>
#include <set>

#include "khub/localhub/store.h"
#include "store_impl.h"

namespace khub::localhub {

namespace {
struct StoredCommit {
  std::string tree_oid, parent, summary, description, author;
  std::int64_t created_at = 0;
};

Expected<StoredCommit> load_commit(db::Connection& conn, std::int64_t repo_rowid, std::string_view oid) {
  db::Statement st(conn.get(),
                   "SELECT tree_oid, parent, summary, description, author, created_at FROM commits "
                   "WHERE repo_id=?1 AND oid=?2");
  st.bind(1, repo_rowid).bind(2, oid);
  if (st.step()) return StoredCommit{st.text(0), st.text(1), st.text(2), st.text(3), st.text(4), st.integer(5)};
  if (st.error()) return *st.error();
  return Error(ErrorCode::Io, "commit " + std::string(oid) + " is missing from the store");
}

// The repo's refs, main first, then the other branches, pull requests and tags (by name).
Expected<std::vector<RefRecord>> ordered_refs(db::Connection& conn, std::int64_t repo_rowid) {
  db::Statement st(conn.get(),
                   "SELECT kind, name, commit_oid FROM refs WHERE repo_id=?1 ORDER BY "
                   "(kind='branch' AND name='main') DESC, kind='tag', kind, name");
  st.bind(1, repo_rowid);
  std::vector<RefRecord> refs;
  while (st.step()) {
    auto kind = st.text(0);
    refs.push_back(RefRecord{kind == "tag" ? RefKind::Tag : kind == "pr" ? RefKind::PullRequest : RefKind::Branch,
                             st.text(1), st.text(2)});
  }
  if (st.error()) return *st.error();
  return refs;
}

std::string full_ref_name(const RefRecord& r) {
  switch (r.kind) {
    case RefKind::Branch: return "refs/heads/" + r.name;
    case RefKind::Tag: return "refs/tags/" + r.name;
    case RefKind::PullRequest: return "refs/pr/" + r.name;
  }
  return r.name;
}

// Oldest first: the commits from `head` back to the root, stopping before one `done` already has.
Expected<std::vector<std::string>> chain_to_root(db::Connection& conn, std::int64_t repo_rowid, std::string head,
                                                 const std::map<std::string, std::string>& done) {
  std::vector<std::string> chain;
  while (!head.empty() && !done.count(head) && chain.size() < 100000) {
    KHUB_TRY(auto c, load_commit(conn, repo_rowid, head));
    chain.push_back(head);
    head = c.parent;
  }
  return std::vector<std::string>(chain.rbegin(), chain.rend());
}
}  // namespace

Status RepoStore::move_repo(const RepoKey& from, const RepoKey& to) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);
  KHUB_CHECK(tx.begin());
  db::Statement src(conn.get(), "SELECT id, ns, name FROM repos WHERE type=?1 AND ns=?2 COLLATE NOCASE AND name=?3 COLLATE NOCASE");
  src.bind(1, to_string(from.type)).bind(2, from.ns).bind(3, from.name);
  if (!src.step()) {
    if (src.error()) return *src.error();
    return Error(ErrorCode::RepoNotFound, std::string(to_string(from.type)) + " repo " + from.id() + " not found");
  }
  const std::int64_t rowid = src.integer(0);
  const std::string old_ns = src.text(1), old_name = src.text(2);
  db::Statement taken(conn.get(), "SELECT id FROM repos WHERE type=?1 AND ns=?2 COLLATE NOCASE AND name=?3 COLLATE NOCASE");
  taken.bind(1, to_string(to.type)).bind(2, to.ns).bind(3, to.name);
  if (taken.step() && taken.integer(0) != rowid) {
    // The Hub's wording (huggingface_hub's tests match it).
    return Error(ErrorCode::Conflict, "A " + std::string(to_string(to.type)) + " repository called " + to.id() +
                                          " already exists");
  }
  if (taken.error()) return *taken.error();
  db::Statement up(conn.get(), "UPDATE repos SET ns=?2, name=?3 WHERE id=?1");
  up.bind(1, rowid).bind(2, to.ns).bind(3, to.name);
  KHUB_CHECK(up.run());
  db::Statement unlink(conn.get(), "DELETE FROM repo_redirects WHERE type=?1 AND ns=?2 AND name=?3");
  unlink.bind(1, to_string(to.type)).bind(2, to.ns).bind(3, to.name);
  KHUB_CHECK(unlink.run());
  db::Statement link(conn.get(), "INSERT OR REPLACE INTO repo_redirects(type, ns, name, repo_id) VALUES(?1,?2,?3,?4)");
  link.bind(1, to_string(from.type)).bind(2, old_ns).bind(3, old_name).bind(4, rowid);
  KHUB_CHECK(link.run());
  return tx.commit();
}

Expected<std::optional<RepoRecord>> RepoStore::find_redirect(const RepoKey& old_key) const {
  std::int64_t rowid = 0;
  {
    KHUB_TRY(auto conn, impl_->pool->acquire());
    db::Statement st(conn.get(), "SELECT repo_id FROM repo_redirects WHERE type=?1 AND ns=?2 AND name=?3");
    st.bind(1, to_string(old_key.type)).bind(2, old_key.ns).bind(3, old_key.name);
    if (!st.step()) {
      if (st.error()) return *st.error();
      return std::optional<RepoRecord>();
    }
    rowid = st.integer(0);
  }
  KHUB_TRY(auto repo, find_repo_by_id(rowid));
  return std::optional<RepoRecord>(std::move(repo));
}

Expected<std::string> RepoStore::squash_history(const RepoRecord& repo, std::string_view ref, std::string_view message,
                                                std::string_view author) {
  RefKind kind = RefKind::Branch;
  std::string name(ref);
  if (name.starts_with("refs/heads/")) name = name.substr(11);
  if (name.starts_with("refs/pr/")) {
    kind = RefKind::PullRequest;
    name = name.substr(8);
  }
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);
  KHUB_CHECK(tx.begin());
  KHUB_TRY(auto head, get_ref(*conn, repo.rowid, kind, name));
  if (head.empty()) return Error(ErrorCode::RevisionNotFound, "Invalid rev id: " + std::string(ref));
  KHUB_TRY(auto top, load_commit(*conn, repo.rowid, head));
  KHUB_TRY(auto files, load_tree(*conn, top.tree_oid));
  KHUB_TRY(auto rec, insert_commit(*conn, repo.rowid, files, "", message, "", author));
  KHUB_CHECK(put_ref(*conn, repo.rowid, kind, name, rec.oid));
  KHUB_CHECK(tx.commit());
  return rec.oid;
}

Expected<std::vector<LfsObject>> RepoStore::list_lfs_objects(const RepoRecord& repo) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  KHUB_TRY(auto refs, ordered_refs(*conn, repo.rowid));
  std::vector<LfsObject> out;
  std::set<std::string> seen;
  db::Statement files(conn.get(),
                      "SELECT c.created_at, f.path, f.size, f.sha256 FROM commits c JOIN tree_files f "
                      "ON f.tree_oid = c.tree_oid WHERE c.repo_id=?1 AND c.oid=?2 AND f.lfs=1 ORDER BY f.path");
  for (const auto& r : refs) {
    KHUB_TRY(auto chain, chain_to_root(*conn, repo.rowid, r.commit, {}));
    for (const auto& oid : chain) {
      files.reset();
      files.bind(1, repo.rowid).bind(2, oid);
      while (files.step()) {
        if (!seen.insert(files.text(3)).second) continue;
        out.push_back(LfsObject{files.text(3), static_cast<std::uint64_t>(files.integer(2)), files.text(1),
                                full_ref_name(r), files.integer(0)});
      }
      if (files.error()) return *files.error();
    }
  }
  return out;
}

Expected<std::size_t> RepoStore::purge_lfs_objects(const RepoRecord& repo, const std::vector<std::string>& sha256s) {
  const std::set<std::string> doomed(sha256s.begin(), sha256s.end());
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);
  KHUB_CHECK(tx.begin());
  KHUB_TRY(auto refs, ordered_refs(*conn, repo.rowid));
  std::map<std::string, std::string> rewritten;  // old commit → new commit (the same when untouched)
  std::set<std::string> found;
  for (const auto& r : refs) {
    KHUB_TRY(auto chain, chain_to_root(*conn, repo.rowid, r.commit, rewritten));
    for (const auto& oid : chain) {
      KHUB_TRY(auto c, load_commit(*conn, repo.rowid, oid));
      const std::string parent = c.parent.empty() ? std::string() : rewritten.at(c.parent);
      KHUB_TRY(auto files, load_tree(*conn, c.tree_oid));
      std::vector<FileEntry> kept;
      for (auto& f : files) {
        if (f.lfs && doomed.count(f.sha256)) {
          found.insert(f.sha256);
        } else {
          kept.push_back(std::move(f));
        }
      }
      if (kept.size() == files.size() && parent == c.parent) {  // nothing removed here or below
        rewritten[oid] = oid;
        continue;
      }
      KHUB_TRY(auto rec, insert_commit(*conn, repo.rowid, kept, parent, c.summary, c.description, c.author, c.created_at));
      rewritten[oid] = rec.oid;
    }
    if (auto now = rewritten.at(r.commit); now != r.commit) KHUB_CHECK(put_ref(*conn, repo.rowid, r.kind, r.name, now));
  }
  db::Statement drop(conn.get(), "DELETE FROM commits WHERE repo_id=?1 AND oid=?2");
  for (const auto& [before, after] : rewritten) {
    if (before == after) continue;
    drop.reset();
    drop.bind(1, repo.rowid).bind(2, before);
    KHUB_CHECK(drop.run());
  }
  db::Statement ungrant(conn.get(), "DELETE FROM lfs_grants WHERE repo_id=?1 AND sha256=?2");
  for (const auto& sha : doomed) {
    ungrant.reset();
    ungrant.bind(1, repo.rowid).bind(2, sha);
    KHUB_CHECK(ungrant.run());
  }
  KHUB_CHECK(tx.commit());
  return found.size();
}

}  // namespace khub::localhub
