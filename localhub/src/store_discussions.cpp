// Discussions and pull requests: numbered together per repo (repos.next_pr), as on the Hub. A pull
// request is its ref refs/pr/{num}; commits land on it through RepoStore::commit.
#include <chrono>

#include "khub/localhub/store.h"
#include "store_impl.h"

namespace khub::localhub {

namespace {
std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

constexpr std::string_view kColumns = "num, title, description, author, is_pr, status, created_at";

Discussion read_discussion(const db::Statement& st) {
  return Discussion{static_cast<int>(st.integer(0)), st.text(1), st.text(2), st.text(3), st.integer(4) != 0,
                    st.text(5), st.integer(6)};
}
}  // namespace

Expected<int> next_discussion_number(db::Connection& conn, std::int64_t repo_rowid) {
  db::Statement next(conn.get(), "UPDATE repos SET next_pr = next_pr + 1 WHERE id=?1 RETURNING next_pr - 1");
  next.bind(1, repo_rowid);
  if (!next.step()) return next.error() ? *next.error() : Error(ErrorCode::Io, "cannot number the discussion");
  return static_cast<int>(next.integer(0));
}

Status insert_discussion(db::Connection& conn, std::int64_t repo_rowid, const Discussion& d) {
  db::Statement ins(conn.get(),
                    "INSERT INTO discussions(repo_id, num, title, description, author, is_pr, status, created_at) "
                    "VALUES(?1,?2,?3,?4,?5,?6,?7,?8)");
  ins.bind(1, repo_rowid).bind(2, std::int64_t{d.num}).bind(3, d.title).bind(4, d.description).bind(5, d.author);
  ins.bind(6, std::int64_t{d.is_pull_request}).bind(7, d.status).bind(8, d.created_at);
  return ins.run();
}

Expected<Discussion> RepoStore::open_discussion(const RepoRecord& repo, std::string_view title,
                                                std::string_view description, std::string_view author,
                                                bool pull_request) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);
  KHUB_CHECK(tx.begin());
  Discussion d{0, std::string(title), std::string(description), std::string(author), pull_request,
               pull_request ? "draft" : "open", now_seconds()};
  KHUB_TRY(d.num, next_discussion_number(*conn, repo.rowid));
  if (pull_request) {
    KHUB_TRY(auto base, get_ref(*conn, repo.rowid, RefKind::Branch, "main"));
    if (base.empty()) return Error(ErrorCode::RevisionNotFound, "Invalid rev id: main");
    KHUB_CHECK(put_ref(*conn, repo.rowid, RefKind::PullRequest, std::to_string(d.num), base));
  }
  KHUB_CHECK(insert_discussion(*conn, repo.rowid, d));
  KHUB_CHECK(tx.commit());
  return d;
}

Expected<std::optional<Discussion>> RepoStore::find_discussion(const RepoRecord& repo, int num) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(), "SELECT " + std::string(kColumns) + " FROM discussions WHERE repo_id=?1 AND num=?2");
  st.bind(1, repo.rowid).bind(2, std::int64_t{num});
  if (st.step()) return std::optional<Discussion>(read_discussion(st));
  if (st.error()) return *st.error();
  return std::optional<Discussion>();
}

Expected<std::vector<Discussion>> RepoStore::list_discussions(const RepoRecord& repo) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(),
                   "SELECT " + std::string(kColumns) + " FROM discussions WHERE repo_id=?1 ORDER BY num DESC");
  st.bind(1, repo.rowid);
  std::vector<Discussion> out;
  while (st.step()) out.push_back(read_discussion(st));
  if (st.error()) return *st.error();
  return out;
}

}  // namespace khub::localhub
