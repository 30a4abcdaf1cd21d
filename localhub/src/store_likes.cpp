// Per-user rows of a repo: likes (repo info's "likes", GET /api/users/{user}/likes, …/likers) and
// access requests to gated repos.
#include <chrono>

#include "khub/localhub/store.h"
#include "store_impl.h"

namespace khub::localhub {

Status RepoStore::set_like(const RepoRecord& repo, std::string_view user, bool liked) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  db::Statement st(conn.get(), liked ? "INSERT OR IGNORE INTO likes(repo_id, user, created_at) VALUES(?1, ?2, ?3)"
                                     : "DELETE FROM likes WHERE repo_id=?1 AND user=?2");
  st.bind(1, repo.rowid).bind(2, user);
  if (liked) st.bind(3, static_cast<std::int64_t>(now));
  return st.run();
}

Expected<std::vector<std::string>> RepoStore::likers(const RepoRecord& repo) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(), "SELECT user FROM likes WHERE repo_id=?1 ORDER BY created_at, user");
  st.bind(1, repo.rowid);
  std::vector<std::string> out;
  while (st.step()) out.push_back(st.text(0));
  if (st.error()) return *st.error();
  return out;
}

Expected<std::vector<std::pair<RepoRecord, std::int64_t>>> RepoStore::likes_of(std::string_view user) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(),
                   "SELECT r.id, r.type, r.ns, r.name, r.private, r.created_at, r.gated, l.created_at FROM likes l "
                   "JOIN repos r ON r.id = l.repo_id WHERE l.user=?1 ORDER BY l.created_at DESC, r.id DESC");
  st.bind(1, user);
  std::vector<std::pair<RepoRecord, std::int64_t>> out;
  while (st.step()) out.emplace_back(read_repo(st), st.integer(7));
  if (st.error()) return *st.error();
  return out;
}

Expected<std::vector<AccessRequest>> RepoStore::access_requests(const RepoRecord& repo) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(), "SELECT user, status, updated_at FROM access_requests WHERE repo_id=?1 ORDER BY updated_at, user");
  st.bind(1, repo.rowid);
  std::vector<AccessRequest> out;
  while (st.step()) out.push_back(AccessRequest{st.text(0), st.text(1), st.integer(2)});
  if (st.error()) return *st.error();
  return out;
}

Status RepoStore::set_access_request(const RepoRecord& repo, std::string_view user, std::string_view status, bool create) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);
  KHUB_CHECK(tx.begin());
  db::Statement cur(conn.get(), "SELECT status FROM access_requests WHERE repo_id=?1 AND user=?2");
  cur.bind(1, repo.rowid).bind(2, user);
  const bool exists = cur.step();
  if (cur.error()) return *cur.error();
  if (!exists && !create) return Error(ErrorCode::EntryNotFound, "No access request from " + std::string(user));
  if (exists && cur.text(0) == status) {
    return Error(ErrorCode::Conflict, "The access request of " + std::string(user) + " is already " + std::string(status));
  }
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  db::Statement put(conn.get(), "INSERT OR REPLACE INTO access_requests(repo_id, user, status, updated_at) VALUES(?1,?2,?3,?4)");
  put.bind(1, repo.rowid).bind(2, user).bind(3, status).bind(4, static_cast<std::int64_t>(now));
  KHUB_CHECK(put.run());
  return tx.commit();
}

}  // namespace khub::localhub
