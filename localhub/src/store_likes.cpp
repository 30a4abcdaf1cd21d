// Likes: who likes which repo (repo info's "likes", GET /api/users/{user}/likes, …/likers).
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

}  // namespace khub::localhub
