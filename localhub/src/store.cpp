#include "khub/localhub/store.h"

#include <cctype>
#include <chrono>

#include "khub/base/hash.h"
#include "store_impl.h"
#include "tree_hash.h"

namespace khub::localhub {

namespace {
constexpr std::string_view kSchema = R"sql(
CREATE TABLE IF NOT EXISTS repos(
  id INTEGER PRIMARY KEY, type TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,
  private INTEGER NOT NULL, created_at INTEGER NOT NULL, next_pr INTEGER NOT NULL DEFAULT 1,
  gated TEXT NOT NULL DEFAULT '',
  UNIQUE(type, ns, name));
CREATE TABLE IF NOT EXISTS commits(
  repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE, oid TEXT NOT NULL,
  tree_oid TEXT NOT NULL, parent TEXT NOT NULL, summary TEXT NOT NULL, description TEXT NOT NULL,
  created_at INTEGER NOT NULL, author TEXT NOT NULL DEFAULT 'khub', PRIMARY KEY(repo_id, oid));
CREATE TABLE IF NOT EXISTS tree_files(
  tree_oid TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL, git_oid TEXT NOT NULL,
  sha256 TEXT NOT NULL, lfs INTEGER NOT NULL, PRIMARY KEY(tree_oid, path)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS trees(oid TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lfs_grants(
  repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE, sha256 TEXT NOT NULL,
  created_at INTEGER NOT NULL, PRIMARY KEY(repo_id, sha256)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS discussions(
  repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE, num INTEGER NOT NULL,
  title TEXT NOT NULL, description TEXT NOT NULL, author TEXT NOT NULL, is_pr INTEGER NOT NULL,
  status TEXT NOT NULL, created_at INTEGER NOT NULL, base_commit TEXT NOT NULL DEFAULT '',
  merge_commit TEXT NOT NULL DEFAULT '', PRIMARY KEY(repo_id, num));
CREATE TABLE IF NOT EXISTS discussion_events(
  repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE, num INTEGER NOT NULL, seq INTEGER NOT NULL,
  type TEXT NOT NULL, author TEXT NOT NULL, created_at INTEGER NOT NULL, data TEXT NOT NULL,
  edited INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(repo_id, num, seq));
CREATE TABLE IF NOT EXISTS access_requests(
  repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE, user TEXT NOT NULL COLLATE NOCASE,
  status TEXT NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY(repo_id, user));
CREATE TABLE IF NOT EXISTS likes(
  repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE, user TEXT NOT NULL COLLATE NOCASE,
  created_at INTEGER NOT NULL, PRIMARY KEY(repo_id, user));
CREATE TABLE IF NOT EXISTS repo_redirects(
  type TEXT NOT NULL, ns TEXT NOT NULL COLLATE NOCASE, name TEXT NOT NULL COLLATE NOCASE,
  repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE, PRIMARY KEY(type, ns, name));
CREATE TABLE IF NOT EXISTS refs(
  repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE, kind TEXT NOT NULL,
  name TEXT NOT NULL, commit_oid TEXT NOT NULL, PRIMARY KEY(repo_id, kind, name));
)sql";

// The Hub seeds new repos with a .gitattributes that routes common binary formats to LFS.
constexpr std::string_view kDefaultGitattributes =
    "*.bin filter=lfs diff=lfs merge=lfs -text\n"
    "*.pt filter=lfs diff=lfs merge=lfs -text\n"
    "*.safetensors filter=lfs diff=lfs merge=lfs -text\n"
    "*.tar.gz filter=lfs diff=lfs merge=lfs -text\n"
    "*.zip filter=lfs diff=lfs merge=lfs -text\n";

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}


// A tree's file rows, with the Xet file hash of LFS content a shard registered.
constexpr std::string_view kFileColumns = "f.path, f.size, f.git_oid, f.sha256, f.lfs, COALESCE(x.file_hash, '')";
constexpr std::string_view kXetJoin = "LEFT JOIN xet_sha256 x ON f.lfs = 1 AND x.sha256 = f.sha256";

FileEntry read_file_entry(const db::Statement& st) {
  return FileEntry{st.text(0), static_cast<std::uint64_t>(st.integer(1)), st.text(2), st.text(3), st.integer(4) != 0,
                   st.text(5)};
}

Error repo_not_found(const RepoKey& key) {
  return Error(ErrorCode::RepoNotFound, std::string(to_string(key.type)) + " repo " + key.id() + " not found");
}
}  // namespace

RepoRecord read_repo(const db::Statement& st) {
  RepoRecord r;
  r.rowid = st.integer(0);
  r.key.type = repo_type_from_name(st.text(1)).value_or(RepoType::Model);
  r.key.ns = st.text(2);
  r.key.name = st.text(3);
  r.is_private = st.integer(4) != 0;
  r.created_at = st.integer(5);
  r.gated = st.text(6);
  return r;
}

std::string_view ref_kind_name(RefKind kind) {
  switch (kind) {
    case RefKind::Branch: return "branch";
    case RefKind::Tag: return "tag";
    case RefKind::PullRequest: return "pr";
  }
  return "branch";
}

RepoStore::RepoStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RepoStore::~RepoStore() = default;

Expected<std::unique_ptr<RepoStore>> RepoStore::open(const std::filesystem::path& root, StoreOptions options) {
  std::error_code ec;
  const bool created = std::filesystem::create_directories(root, ec);
  if (ec) return Error(ErrorCode::Io, "cannot create store folder " + root.string() + ": " + ec.message());
  // A new store is the server's alone (private repos' blobs, the URL-signing key); an existing
  // folder keeps the modes its owner gave it.
  if (created) std::filesystem::permissions(root, std::filesystem::perms::owner_all, ec);
  auto impl = std::make_unique<Impl>(root, std::move(options));
  if (impl->options.remove_leftovers) impl->blobs.remove_leftovers();
  KHUB_TRY(impl->pool, db::Pool::open(root / "hub.sqlite3"));
  KHUB_TRY(auto conn, impl->pool->acquire());
  KHUB_CHECK(conn->exec(kSchema));
  KHUB_CHECK(create_xet_tables(*conn));
  // Stores made before commits had an author: add the column (their commits read as "khub").
  if (db::Statement probe(conn->get(), "SELECT author FROM commits LIMIT 0"); !probe.ok())
    KHUB_CHECK(conn->exec("ALTER TABLE commits ADD COLUMN author TEXT NOT NULL DEFAULT 'khub';"));
  // Stores made before pull requests could be merged (a few commits of issue 33): add the columns.
  if (db::Statement probe(conn->get(), "SELECT base_commit FROM discussions LIMIT 0"); !probe.ok())
    KHUB_CHECK(conn->exec("ALTER TABLE discussions ADD COLUMN base_commit TEXT NOT NULL DEFAULT '';"
                          "ALTER TABLE discussions ADD COLUMN merge_commit TEXT NOT NULL DEFAULT '';"));
  return std::unique_ptr<RepoStore>(new RepoStore(std::move(impl)));
}

BlobStore& RepoStore::blobs() { return impl_->blobs; }
const std::filesystem::path& RepoStore::root() const { return impl_->root; }

Expected<RepoRecord> RepoStore::create_repo(const RepoKey& key, bool is_private, std::string_view author) {
  KHUB_TRY(auto attrs, impl_->blobs.put(kDefaultGitattributes));
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);
  KHUB_CHECK(tx.begin());
  {  // names are case-insensitive, as on the Hub: acme/ReLU is acme/relu
    db::Statement exists(conn.get(), "SELECT 1 FROM repos WHERE type=?1 AND ns=?2 COLLATE NOCASE AND name=?3 COLLATE NOCASE");
    exists.bind(1, to_string(key.type)).bind(2, key.ns).bind(3, key.name);
    if (exists.step()) {
      return Error(ErrorCode::Conflict, "You already created this " + std::string(to_string(key.type)) +
                                            " repo: " + key.id());
    }
    if (exists.error()) return *exists.error();
  }
  auto created = now_seconds();
  db::Statement ins(conn.get(), "INSERT INTO repos(type, ns, name, private, created_at) VALUES(?1,?2,?3,?4,?5)");
  ins.bind(1, to_string(key.type)).bind(2, key.ns).bind(3, key.name).bind(4, std::int64_t{is_private}).bind(5, created);
  KHUB_CHECK(ins.run());
  RepoRecord rec{sqlite3_last_insert_rowid(conn.get()), key, is_private, created};
  {  // the id is taken again: a moved repo's old id stops pointing at it
    db::Statement unlink(conn.get(), "DELETE FROM repo_redirects WHERE type=?1 AND ns=?2 AND name=?3");
    unlink.bind(1, to_string(key.type)).bind(2, key.ns).bind(3, key.name);
    KHUB_CHECK(unlink.run());
  }
  FileEntry file{".gitattributes", attrs.size, git_blob_sha1_hex(kDefaultGitattributes), attrs.sha256, false};
  KHUB_TRY(auto first, insert_commit(*conn, rec.rowid, {file}, "", "initial commit", "", author));
  KHUB_CHECK(put_ref(*conn, rec.rowid, RefKind::Branch, "main", first.oid));
  KHUB_CHECK(tx.commit());
  return rec;
}

Status RepoStore::delete_repo(const RepoKey& key) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement del(conn.get(), "DELETE FROM repos WHERE type=?1 AND ns=?2 COLLATE NOCASE AND name=?3 COLLATE NOCASE");
  del.bind(1, to_string(key.type)).bind(2, key.ns).bind(3, key.name);
  KHUB_CHECK(del.run());
  if (sqlite3_changes(conn.get()) == 0) return repo_not_found(key);
  return {};
}

Expected<RepoRecord> RepoStore::find_repo(const RepoKey& key) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(), "SELECT id, type, ns, name, private, created_at, gated FROM repos WHERE type=?1 AND ns=?2 COLLATE NOCASE AND name=?3 COLLATE NOCASE");
  st.bind(1, to_string(key.type)).bind(2, key.ns).bind(3, key.name);
  if (st.step()) return read_repo(st);
  if (st.error()) return *st.error();
  return repo_not_found(key);
}

Expected<std::vector<RepoRecord>> RepoStore::list_repos(RepoType type, std::string_view author,
                                                       std::string_view search) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(),
                   "SELECT id, type, ns, name, private, created_at, gated FROM repos WHERE type=?1 "
                   "AND (?2 = '' OR ns = ?2 COLLATE NOCASE) AND instr(lower(ns || '/' || name), lower(?3)) > 0 "
                   "ORDER BY created_at DESC, id DESC");
  st.bind(1, to_string(type)).bind(2, author).bind(3, search);
  std::vector<RepoRecord> out;
  while (st.step()) out.push_back(read_repo(st));
  if (st.error()) return *st.error();
  return out;
}

Status RepoStore::set_private(const RepoKey& key, bool is_private) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement up(conn.get(), "UPDATE repos SET private=?4 WHERE type=?1 AND ns=?2 COLLATE NOCASE AND name=?3 COLLATE NOCASE");
  up.bind(1, to_string(key.type)).bind(2, key.ns).bind(3, key.name).bind(4, std::int64_t{is_private});
  KHUB_CHECK(up.run());
  if (sqlite3_changes(conn.get()) == 0) return repo_not_found(key);
  return {};
}

Status RepoStore::set_gated(const RepoKey& key, std::string_view mode) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement up(conn.get(), "UPDATE repos SET gated=?4 WHERE type=?1 AND ns=?2 COLLATE NOCASE AND name=?3 COLLATE NOCASE");
  up.bind(1, to_string(key.type)).bind(2, key.ns).bind(3, key.name).bind(4, mode);
  KHUB_CHECK(up.run());
  if (sqlite3_changes(conn.get()) == 0) return repo_not_found(key);
  return {};
}

Expected<bool> RepoStore::references_blob(const RepoRecord& repo, std::string_view sha256) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(),
                   "SELECT 1 FROM commits c JOIN tree_files f ON f.tree_oid = c.tree_oid "
                   "WHERE c.repo_id=?1 AND f.sha256=?2 LIMIT 1");
  st.bind(1, repo.rowid).bind(2, sha256);
  if (st.step()) return true;
  if (st.error()) return *st.error();
  return false;
}

Status RepoStore::grant_object(std::int64_t repo_rowid, std::string_view sha256) {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(), "INSERT OR REPLACE INTO lfs_grants(repo_id, sha256, created_at) VALUES(?1, ?2, ?3)");
  st.bind(1, repo_rowid).bind(2, sha256).bind(3, now_seconds());
  return st.run();
}

Expected<bool> RepoStore::holds_object(const RepoRecord& repo, std::string_view sha256) const {
  {
    KHUB_TRY(auto conn, impl_->pool->acquire());
    db::Statement st(conn.get(), "SELECT 1 FROM lfs_grants WHERE repo_id=?1 AND sha256=?2");
    st.bind(1, repo.rowid).bind(2, sha256);
    if (st.step()) return true;
    if (st.error()) return *st.error();
  }
  return references_blob(repo, sha256);
}

Expected<std::string> get_ref(db::Connection& conn, std::int64_t repo_rowid, RefKind kind, std::string_view name) {
  db::Statement st(conn.get(), "SELECT commit_oid FROM refs WHERE repo_id=?1 AND kind=?2 AND name=?3");
  st.bind(1, repo_rowid).bind(2, ref_kind_name(kind)).bind(3, name);
  if (st.step()) return st.text(0);
  if (st.error()) return *st.error();
  return std::string();
}

Status put_ref(db::Connection& conn, std::int64_t repo_rowid, RefKind kind, std::string_view name,
               std::string_view commit) {
  db::Statement st(conn.get(), "INSERT OR REPLACE INTO refs(repo_id, kind, name, commit_oid) VALUES(?1,?2,?3,?4)");
  st.bind(1, repo_rowid).bind(2, ref_kind_name(kind)).bind(3, name).bind(4, commit);
  return st.run();
}

Expected<std::string> RepoStore::resolve_revision(const RepoRecord& repo, std::string_view rev) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  auto not_found = [&] {
    return Error(ErrorCode::RevisionNotFound, "Invalid rev id: " + std::string(rev));
  };
  if (rev.size() == 40 && is_hex(rev)) {
    db::Statement st(conn.get(), "SELECT oid FROM commits WHERE repo_id=?1 AND oid=?2");
    st.bind(1, repo.rowid).bind(2, rev);
    if (st.step()) return st.text(0);
    if (st.error()) return *st.error();
  }
  std::vector<std::pair<RefKind, std::string_view>> candidates;
  if (rev.starts_with("refs/heads/")) {
    candidates.emplace_back(RefKind::Branch, rev.substr(11));
  } else if (rev.starts_with("refs/tags/")) {
    candidates.emplace_back(RefKind::Tag, rev.substr(10));
  } else if (rev.starts_with("refs/pr/")) {
    candidates.emplace_back(RefKind::PullRequest, rev.substr(8));
  } else {
    candidates.emplace_back(RefKind::Branch, rev);
    candidates.emplace_back(RefKind::Tag, rev);
  }
  for (auto [kind, name] : candidates) {
    KHUB_TRY(auto commit, get_ref(*conn, repo.rowid, kind, name));
    if (!commit.empty()) return commit;
  }
  if (rev.size() >= 7 && rev.size() < 40 && is_hex(rev)) {  // a short commit id, when only one commit has it
    std::string prefix(rev);
    for (auto& c : prefix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    db::Statement st(conn.get(), "SELECT oid FROM commits WHERE repo_id=?1 AND substr(oid, 1, ?3)=?2 LIMIT 2");
    st.bind(1, repo.rowid).bind(2, prefix).bind(3, static_cast<std::int64_t>(prefix.size()));
    std::vector<std::string> matches;
    while (st.step()) matches.push_back(st.text(0));
    if (st.error()) return *st.error();
    if (matches.size() == 1) return matches[0];
  }
  return not_found();
}

Expected<CommitRecord> RepoStore::commit_info(const RepoRecord& repo, std::string_view oid) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(),
                   "SELECT oid, tree_oid, parent, summary, description, created_at, author FROM commits "
                   "WHERE repo_id=?1 AND oid=?2");
  st.bind(1, repo.rowid).bind(2, oid);
  if (st.step()) {
    return CommitRecord{st.text(0), st.text(1), st.text(2), st.text(3), st.text(4), st.integer(5), st.text(6)};
  }
  if (st.error()) return *st.error();
  return Error(ErrorCode::RevisionNotFound, "Invalid rev id: " + std::string(oid));
}

Expected<std::vector<FileEntry>> load_tree(db::Connection& conn, std::string_view tree_oid) {
  db::Statement st(conn.get(), "SELECT " + std::string(kFileColumns) + " FROM tree_files f " +
                                   std::string(kXetJoin) + " WHERE f.tree_oid=?1 ORDER BY f.path");
  st.bind(1, tree_oid);
  std::vector<FileEntry> files;
  while (st.step()) files.push_back(read_file_entry(st));
  if (st.error()) return *st.error();
  return files;
}

Expected<std::vector<FileEntry>> RepoStore::list_files(const RepoRecord& repo, std::string_view commit) const {
  KHUB_TRY(auto info, commit_info(repo, commit));
  KHUB_TRY(auto conn, impl_->pool->acquire());
  return load_tree(*conn, info.tree_oid);
}

Expected<std::optional<FileEntry>> RepoStore::find_file(const RepoRecord& repo, std::string_view commit,
                                                        std::string_view path) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(), "SELECT " + std::string(kFileColumns) +
                                   " FROM commits c JOIN tree_files f ON f.tree_oid = c.tree_oid " +
                                   std::string(kXetJoin) + " WHERE c.repo_id=?1 AND c.oid=?2 AND f.path=?3");
  st.bind(1, repo.rowid).bind(2, commit).bind(3, path);
  if (st.step()) return std::optional<FileEntry>(read_file_entry(st));
  if (st.error()) return *st.error();
  return std::optional<FileEntry>();
}

Expected<std::vector<CommitRecord>> RepoStore::history(const RepoRecord& repo, std::string_view commit) const {
  std::vector<CommitRecord> out;
  std::string next(commit);
  while (!next.empty() && out.size() < 100000) {
    KHUB_TRY(auto info, commit_info(repo, next));
    next = info.parent;
    out.push_back(std::move(info));
  }
  return out;
}

Expected<std::vector<RefRecord>> RepoStore::list_refs(const RepoRecord& repo) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(), "SELECT kind, name, commit_oid FROM refs WHERE repo_id=?1 ORDER BY kind, name");
  st.bind(1, repo.rowid);
  std::vector<RefRecord> refs;
  while (st.step()) {
    auto kind = st.text(0);
    refs.push_back(RefRecord{kind == "tag" ? RefKind::Tag : kind == "pr" ? RefKind::PullRequest : RefKind::Branch,
                             st.text(1), st.text(2)});
  }
  if (st.error()) return *st.error();
  return refs;
}

Status RepoStore::create_ref(const RepoRecord& repo, RefKind kind, std::string_view name, std::string_view commit,
                             bool overwrite) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);
  KHUB_CHECK(tx.begin());
  KHUB_TRY(auto existing, get_ref(*conn, repo.rowid, kind, name));
  if (!existing.empty() && !overwrite) {
    // The Hub's wording (huggingface_hub's tests match it): the full ref name.
    return Error(ErrorCode::Conflict, std::string(kind == RefKind::Tag ? "Tag refs/tags/" : "Reference refs/heads/") +
                                          std::string(name) + " already exists");
  }
  KHUB_CHECK(put_ref(*conn, repo.rowid, kind, name, commit));
  return tx.commit();
}

Status RepoStore::delete_ref(const RepoRecord& repo, RefKind kind, std::string_view name) {
  if (kind == RefKind::Branch && name == "main") {
    return Error(ErrorCode::InvalidArgument, "Cannot delete refs/heads/main");
  }
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement del(conn.get(), "DELETE FROM refs WHERE repo_id=?1 AND kind=?2 AND name=?3");
  del.bind(1, repo.rowid).bind(2, ref_kind_name(kind)).bind(3, name);
  KHUB_CHECK(del.run());
  if (sqlite3_changes(conn.get()) == 0) {
    return Error(ErrorCode::RevisionNotFound, "Invalid rev id: " + std::string(name));
  }
  return {};
}

}  // namespace khub::localhub
