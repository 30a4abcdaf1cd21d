// Discussions and pull requests: numbered together per repo (repos.next_pr), as on the Hub. A pull
// request is its ref refs/pr/{num}; commits land on it through RepoStore::commit, and a merge
// applies what it changed since its base onto main.
#include <chrono>
#include <map>
#include <set>

#include "khub/localhub/store.h"
#include "store_impl.h"

namespace khub::localhub {

namespace {
std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

constexpr std::string_view kColumns = "num, title, description, author, is_pr, status, created_at, base_commit, merge_commit";

Discussion read_discussion(const db::Statement& st) {
  return Discussion{static_cast<int>(st.integer(0)), st.text(1), st.text(2), st.text(3), st.integer(4) != 0,
                    st.text(5), st.integer(6), st.text(7), st.text(8)};
}

Expected<std::optional<Discussion>> load_discussion(db::Connection& conn, std::int64_t repo_rowid, int num) {
  db::Statement st(conn.get(), "SELECT " + std::string(kColumns) + " FROM discussions WHERE repo_id=?1 AND num=?2");
  st.bind(1, repo_rowid).bind(2, std::int64_t{num});
  if (st.step()) return std::optional<Discussion>(read_discussion(st));
  if (st.error()) return *st.error();
  return std::optional<Discussion>();
}

Error no_discussion(int num) { return Error(ErrorCode::EntryNotFound, "Discussion " + std::to_string(num) + " not found"); }

Expected<DiscussionEvent> insert_event(db::Connection& conn, std::int64_t repo_rowid, int num, std::string_view type,
                                       std::string_view author, std::string_view data) {
  db::Statement ins(conn.get(),
                    "INSERT INTO discussion_events(repo_id, num, seq, type, author, created_at, data) "
                    "SELECT ?1, ?2, COALESCE(MAX(seq), 0) + 1, ?3, ?4, ?5, ?6 FROM discussion_events "
                    "WHERE repo_id=?1 AND num=?2 RETURNING seq, created_at");
  ins.bind(1, repo_rowid).bind(2, std::int64_t{num}).bind(3, type).bind(4, author).bind(5, now_seconds()).bind(6, data);
  if (!ins.step()) return ins.error() ? *ins.error() : Error(ErrorCode::Io, "cannot record the discussion event");
  return DiscussionEvent{static_cast<int>(ins.integer(0)), std::string(type), std::string(author), ins.integer(1),
                         std::string(data), false};
}

Expected<std::string> tree_of(db::Connection& conn, std::int64_t repo_rowid, std::string_view commit) {
  db::Statement st(conn.get(), "SELECT tree_oid FROM commits WHERE repo_id=?1 AND oid=?2");
  st.bind(1, repo_rowid).bind(2, commit);
  if (st.step()) return st.text(0);
  if (st.error()) return *st.error();
  return Error(ErrorCode::Io, "commit " + std::string(commit) + " is missing from the store");
}

Expected<std::map<std::string, FileEntry>> files_at(db::Connection& conn, std::int64_t repo_rowid,
                                                    std::string_view commit) {
  KHUB_TRY(auto tree, tree_of(conn, repo_rowid, commit));
  KHUB_TRY(auto list, load_tree(conn, tree));
  std::map<std::string, FileEntry> out;
  for (auto& f : list) out.emplace(f.path, std::move(f));
  return out;
}

bool same_entry(const FileEntry* a, const FileEntry* b) {
  if (!a || !b) return a == b;
  return a->git_oid == b->git_oid && a->sha256 == b->sha256 && a->lfs == b->lfs;
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
                    "INSERT INTO discussions(repo_id, num, title, description, author, is_pr, status, created_at, "
                    "base_commit) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)");
  ins.bind(1, repo_rowid).bind(2, std::int64_t{d.num}).bind(3, d.title).bind(4, d.description).bind(5, d.author);
  ins.bind(6, std::int64_t{d.is_pull_request}).bind(7, d.status).bind(8, d.created_at).bind(9, d.base_commit);
  KHUB_CHECK(ins.run());
  KHUB_TRY(auto opening, insert_event(conn, repo_rowid, d.num, "comment", d.author, d.description));
  (void)opening;
  return {};
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
    KHUB_TRY(d.base_commit, get_ref(*conn, repo.rowid, RefKind::Branch, "main"));
    if (d.base_commit.empty()) return Error(ErrorCode::RevisionNotFound, "Invalid rev id: main");
    KHUB_CHECK(put_ref(*conn, repo.rowid, RefKind::PullRequest, std::to_string(d.num), d.base_commit));
  }
  KHUB_CHECK(insert_discussion(*conn, repo.rowid, d));
  KHUB_CHECK(tx.commit());
  return d;
}

Expected<std::optional<Discussion>> RepoStore::find_discussion(const RepoRecord& repo, int num) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  return load_discussion(*conn, repo.rowid, num);
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

Expected<std::vector<DiscussionEvent>> RepoStore::discussion_events(const RepoRecord& repo, int num) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(),
                   "SELECT seq, type, author, created_at, data, edited FROM discussion_events "
                   "WHERE repo_id=?1 AND num=?2 ORDER BY seq");
  st.bind(1, repo.rowid).bind(2, std::int64_t{num});
  std::vector<DiscussionEvent> out;
  while (st.step()) {
    out.push_back(DiscussionEvent{static_cast<int>(st.integer(0)), st.text(1), st.text(2), st.integer(3), st.text(4),
                                  st.integer(5) != 0});
  }
  if (st.error()) return *st.error();
  return out;
}

Expected<DiscussionEvent> RepoStore::add_discussion_event(const RepoRecord& repo, int num, std::string_view type,
                                                          std::string_view author, std::string_view data) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);
  KHUB_CHECK(tx.begin());
  KHUB_TRY(auto d, load_discussion(*conn, repo.rowid, num));
  if (!d) return no_discussion(num);
  if (type == "status-change" || type == "title-change") {
    std::string value(type == "status-change" ? data : data.substr(data.find('\n') + 1));
    db::Statement up(conn.get(), type == "status-change" ? "UPDATE discussions SET status=?3 WHERE repo_id=?1 AND num=?2"
                                                         : "UPDATE discussions SET title=?3 WHERE repo_id=?1 AND num=?2");
    up.bind(1, repo.rowid).bind(2, std::int64_t{num}).bind(3, value);
    KHUB_CHECK(up.run());
  }
  KHUB_TRY(auto event, insert_event(*conn, repo.rowid, num, type, author, data));
  KHUB_CHECK(tx.commit());
  return event;
}

Status RepoStore::edit_discussion_comment(const RepoRecord& repo, int num, int seq, std::string_view text) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement up(conn.get(),
                   "UPDATE discussion_events SET data=?4, edited=1 WHERE repo_id=?1 AND num=?2 AND seq=?3 AND type='comment'");
  up.bind(1, repo.rowid).bind(2, std::int64_t{num}).bind(3, std::int64_t{seq}).bind(4, text);
  KHUB_CHECK(up.run());
  if (sqlite3_changes(conn.get()) == 0) return Error(ErrorCode::EntryNotFound, "Comment not found");
  return {};
}

Expected<std::string> RepoStore::merge_pull_request(const RepoRecord& repo, int num, std::string_view author) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);
  KHUB_CHECK(tx.begin());
  KHUB_TRY(auto d, load_discussion(*conn, repo.rowid, num));
  if (!d || !d->is_pull_request) return no_discussion(num);
  if (d->status != "open") {
    return Error(ErrorCode::InvalidArgument, "Pull request #" + std::to_string(num) + " is " + d->status +
                                                 ": only an open pull request can be merged");
  }
  KHUB_TRY(auto head, get_ref(*conn, repo.rowid, RefKind::PullRequest, std::to_string(num)));
  KHUB_TRY(auto main_head, get_ref(*conn, repo.rowid, RefKind::Branch, "main"));
  if (head.empty() || main_head.empty()) return Error(ErrorCode::RevisionNotFound, "Invalid rev id: refs/pr/" + std::to_string(num));
  KHUB_TRY(auto base, files_at(*conn, repo.rowid, d->base_commit.empty() ? main_head : d->base_commit));
  KHUB_TRY(auto theirs, files_at(*conn, repo.rowid, head));
  KHUB_TRY(auto ours, files_at(*conn, repo.rowid, main_head));
  std::set<std::string> paths;
  for (const auto* side : {&base, &theirs, &ours})
    for (const auto& [p, _] : *side) paths.insert(p);
  auto find = [](const std::map<std::string, FileEntry>& m, const std::string& p) -> const FileEntry* {
    auto it = m.find(p);
    return it == m.end() ? nullptr : &it->second;
  };
  std::vector<FileEntry> merged;
  for (const auto& p : paths) {
    const FileEntry *b = find(base, p), *t = find(theirs, p), *o = find(ours, p);
    const FileEntry* pick = o;  // unchanged by the pull request: main's
    if (!same_entry(t, b)) {
      if (!same_entry(o, b) && !same_entry(o, t)) {
        return Error(ErrorCode::Conflict, "Merge conflict: " + p + " changed on main and in the pull request");
      }
      pick = t;
    }
    if (pick) merged.push_back(*pick);
  }
  KHUB_TRY(auto rec, insert_commit(*conn, repo.rowid, merged, main_head, d->title,
                                   "Merge pull request #" + std::to_string(num), author));
  KHUB_CHECK(put_ref(*conn, repo.rowid, RefKind::Branch, "main", rec.oid));
  db::Statement up(conn.get(), "UPDATE discussions SET status='merged', merge_commit=?3 WHERE repo_id=?1 AND num=?2");
  up.bind(1, repo.rowid).bind(2, std::int64_t{num}).bind(3, rec.oid);
  KHUB_CHECK(up.run());
  KHUB_TRY(auto event, insert_event(*conn, repo.rowid, num, "status-change", author, "merged"));
  (void)event;
  KHUB_CHECK(tx.commit());
  return rec.oid;
}

}  // namespace khub::localhub
