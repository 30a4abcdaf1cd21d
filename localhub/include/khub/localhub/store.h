#pragma once
// RepoStore: the local hub's storage. File contents live in a content-addressed blob folder
// (BlobStore, keyed by sha256); repos, refs, commits and trees live in SQLite (WAL mode). A commit
// writes its blobs first and then changes the database in one transaction, so a crash at any point
// leaves either the old or the new state, never a mix.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/base/repo_type.h"
#include "khub/localhub/blob_store.h"
#include "khub/xet/hash.h"
#include "khub/xet/shard.h"
#include "khub/xet/xorb.h"

namespace khub::localhub {

using khub::RepoType;

struct RepoKey {
  RepoType type = RepoType::Model;
  std::string ns;
  std::string name;
  [[nodiscard]] std::string id() const { return ns + "/" + name; }
};

struct RepoRecord {
  std::int64_t rowid = 0;
  RepoKey key;
  bool is_private = false;
  std::int64_t created_at = 0;  // unix seconds
  std::string gated;            // "" (open), "auto" (any signed-in user) or "manual" (granted tokens)
};

/// One file of a commit's tree. `git_oid` is the git blob sha1 (of the pointer text for LFS files).
struct FileEntry {
  std::string path;
  std::uint64_t size = 0;
  std::string git_oid;
  std::string sha256;
  bool lfs = false;
  std::string xet_hash;  // LFS files whose content a Xet shard registered: the Xet file hash, else empty
};

/// A xorb the CAS holds: its record bytes are the blob `blob_sha256`; its chunks as
/// xet::index_xorb found them (offsets into those record bytes, content sizes).
struct StoredXorb {
  std::string blob_sha256;
  std::vector<xet::XorbChunk> chunks;
};

/// A file a Xet shard registered: its content is its terms' chunks, in order.
struct XetFile {
  xet::Hash hash;
  std::uint64_t size = 0;
  std::vector<xet::FileTerm> terms;  // verification hashes are checked on upload, not kept
};

struct CommitRecord {
  std::string oid;
  std::string tree_oid;
  std::string parent;  // empty for the first commit
  std::string summary;
  std::string description;
  std::int64_t created_at = 0;
  std::string author = "khub";  // the token's user (the git object's author stays khub, so ids are stable)
};

enum class RefKind { Branch, Tag, PullRequest };

struct RefRecord {
  RefKind kind = RefKind::Branch;
  std::string name;  // "main", "v1", or the PR number
  std::string commit;
};

enum class OpKind { AddFile, DeleteFile, DeleteFolder, RenameFile };

/// One change of a commit. For AddFile the content must already be in the blob store.
struct CommitOp {
  OpKind kind = OpKind::AddFile;
  std::string path;
  std::string sha256;  // AddFile: content
  std::uint64_t size = 0;
  bool lfs = false;
  std::string from;  // RenameFile: the current path
};

struct CommitRequest {
  std::string summary;
  std::string description;
  std::string parent_commit;  // optional: fail with Conflict (412) when the branch moved
  std::vector<CommitOp> ops;
  bool create_pr = false;
  std::string author = "khub";  // who commits (the token's user), for the history
};

/// A discussion or pull request (numbers are shared; a pull request's ref is refs/pr/{num}).
struct Discussion {
  int num = 0;
  std::string title;
  std::string description;
  std::string author;
  bool is_pull_request = false;
  std::string status = "open";  // "open", "closed", "merged", or "draft" for a pull request opened empty
  std::int64_t created_at = 0;
  std::string base_commit;   // pull requests: the head of main when opened (what a merge compares to)
  std::string merge_commit;  // pull requests, once merged
};

/// One event of a discussion: a "comment" (data: its text), "status-change" (data: the new
/// status), "title-change" (data: old title, '\n', new title) or "commit" (data: oid, '\n', summary).
struct DiscussionEvent {
  int seq = 0;  // 1 = the opening comment
  std::string type;
  std::string author;
  std::int64_t created_at = 0;
  std::string data;
  bool edited = false;
};

/// An LFS object some commit of a repo holds, with one path and ref where it appears.
struct LfsObject {
  std::string sha256;
  std::uint64_t size = 0;
  std::string filename;
  std::string ref;            // "refs/heads/main", "refs/pr/1", …
  std::int64_t pushed_at = 0;  // the oldest commit of that ref holding it
};

struct AccessRequest {
  std::string user;
  std::string status;  // "pending", "accepted", "rejected"
  std::int64_t updated_at = 0;
};

struct CommitResult {
  std::string oid;
  int pr_number = 0;  // > 0 when a pull request was opened
};

struct StoreOptions {
  /// Called between the steps of a commit ("blobs-written", "in-transaction") and of a garbage
  /// collection ("gc-locked"); tests use it to kill the process or race a commit.
  std::function<void(std::string_view stage)> test_hook;
  /// Delete tmp/ and uploads/ on open (what a killed server left). Off for a store another
  /// process may be serving (`khub serve --gc`): its uploads in flight live there.
  bool remove_leftovers = true;
};

struct GcOptions {
  /// Unreferenced blobs, temp files and multipart uploads younger than this are kept: an upload
  /// may be on its way to a commit. A blob's age counts from its last upload or LFS batch offer.
  std::chrono::seconds grace{3600};
  bool dry_run = false;  // count what would go, delete nothing
};

struct GcReport {
  std::uint64_t trees_removed = 0;     // trees no commit uses any more (deleted repos)
  std::uint64_t blobs_removed = 0;     // blobs no tree uses, older than the grace period
  std::uint64_t bytes_removed = 0;     // their size
  std::uint64_t blobs_kept_young = 0;  // unreferenced, but within the grace period
  std::uint64_t blobs_kept = 0;        // referenced
  std::uint64_t uploads_removed = 0;   // abandoned multipart uploads and temp files
  std::uint64_t xorbs_removed = 0;     // Xet xorbs no kept file uses, older than the grace period
};

class RepoStore {
 public:
  /// Opens (creating when absent) the store under `root`: root/hub.sqlite3 and root/blobs/.
  /// Removes temp files a killed process left behind. Io on failure.
  [[nodiscard]] static Expected<std::unique_ptr<RepoStore>> open(const std::filesystem::path& root,
                                                                 StoreOptions options = {});
  ~RepoStore();
  RepoStore(const RepoStore&) = delete;
  RepoStore& operator=(const RepoStore&) = delete;

  /// Creates the repo with a first commit on `main` holding `.gitattributes`, credited to `author`.
  /// Conflict if it exists.
  [[nodiscard]] Expected<RepoRecord> create_repo(const RepoKey& key, bool is_private, std::string_view author = "khub");
  /// RepoNotFound when absent.
  [[nodiscard]] Status delete_repo(const RepoKey& key);
  [[nodiscard]] Expected<RepoRecord> find_repo(const RepoKey& key) const;
  /// Repos of `type`, newest first: those in namespace `author` (any case; empty = all) whose
  /// "ns/name" contains `search` (any case; empty = all).
  [[nodiscard]] Expected<std::vector<RepoRecord>> list_repos(RepoType type, std::string_view author,
                                                             std::string_view search) const;
  /// Makes a repo private or public. RepoNotFound when absent.
  [[nodiscard]] Status set_private(const RepoKey& key, bool is_private);
  /// Sets the gating mode: "", "auto" or "manual". RepoNotFound when absent.
  [[nodiscard]] Status set_gated(const RepoKey& key, std::string_view mode);
  /// True when some commit of `repo` has a file with this content.
  [[nodiscard]] Expected<bool> references_blob(const RepoRecord& repo, std::string_view sha256) const;
  /// Records that a client uploaded the bytes of `sha256` to the repo with this rowid: a commit of
  /// that repo may then point an LFS file at them. Blobs are stored once for all repos, but a repo
  /// only gets to use content it was given or already has (garbage collection drops grants older
  /// than its grace period).
  [[nodiscard]] Status grant_object(std::int64_t repo_rowid, std::string_view sha256);
  /// Granted to `repo` by an upload, or referenced by one of its commits.
  [[nodiscard]] Expected<bool> holds_object(const RepoRecord& repo, std::string_view sha256) const;

  /// Branch, tag, refs/heads/x, refs/tags/x, refs/pr/N, a 40-hex commit of this repo or a 7-39 hex
  /// prefix of exactly one of its commits → commit oid; RevisionNotFound otherwise.
  [[nodiscard]] Expected<std::string> resolve_revision(const RepoRecord& repo, std::string_view rev) const;
  [[nodiscard]] Expected<CommitRecord> commit_info(const RepoRecord& repo, std::string_view oid) const;
  /// Files of a commit's tree, sorted by path.
  [[nodiscard]] Expected<std::vector<FileEntry>> list_files(const RepoRecord& repo,
                                                            std::string_view commit) const;
  /// One file of a commit's tree; nullopt when the commit has no such file.
  [[nodiscard]] Expected<std::optional<FileEntry>> find_file(const RepoRecord& repo, std::string_view commit,
                                                             std::string_view path) const;
  /// Commits reachable from `commit`, newest first.
  [[nodiscard]] Expected<std::vector<CommitRecord>> history(const RepoRecord& repo,
                                                            std::string_view commit) const;

  [[nodiscard]] Expected<std::vector<RefRecord>> list_refs(const RepoRecord& repo) const;
  /// Conflict when the ref exists (unless overwrite), RevisionNotFound for a bad start.
  [[nodiscard]] Status create_ref(const RepoRecord& repo, RefKind kind, std::string_view name,
                                  std::string_view commit, bool overwrite = false);
  /// RevisionNotFound when absent; InvalidArgument for `main`.
  [[nodiscard]] Status delete_ref(const RepoRecord& repo, RefKind kind, std::string_view name);

  /// Applies `request` on top of branch `revision` (or `refs/pr/N`) atomically. Errors:
  /// RevisionNotFound, Conflict (stale parent), EntryNotFound (deleting or renaming an absent file),
  /// Integrity (AddFile whose blob is missing or has another size).
  [[nodiscard]] Expected<CommitResult> commit(const RepoRecord& repo, std::string_view revision,
                                              const CommitRequest& request);

  // Discussions and pull requests (store_discussions.cpp).

  /// Opens a discussion, or a draft pull request whose ref refs/pr/{num} starts at the head of main.
  [[nodiscard]] Expected<Discussion> open_discussion(const RepoRecord& repo, std::string_view title,
                                                     std::string_view description, std::string_view author,
                                                     bool pull_request);
  /// nullopt when the repo has no discussion with this number.
  [[nodiscard]] Expected<std::optional<Discussion>> find_discussion(const RepoRecord& repo, int num) const;
  /// Newest first.
  [[nodiscard]] Expected<std::vector<Discussion>> list_discussions(const RepoRecord& repo) const;
  [[nodiscard]] Expected<std::vector<DiscussionEvent>> discussion_events(const RepoRecord& repo, int num) const;
  /// Adds an event; for "status-change" and "title-change" also sets the discussion's status or
  /// title. EntryNotFound for a missing discussion.
  [[nodiscard]] Expected<DiscussionEvent> add_discussion_event(const RepoRecord& repo, int num, std::string_view type,
                                                               std::string_view author, std::string_view data);
  /// Replaces a comment's text and marks it edited. EntryNotFound when there is no such comment.
  [[nodiscard]] Status edit_discussion_comment(const RepoRecord& repo, int num, int seq, std::string_view text);
  /// Merges open pull request `num` into main: a commit on main with the files the pull request
  /// changed since its base (Conflict when main changed one of them otherwise); the pull request
  /// becomes "merged". Returns the merge commit.
  [[nodiscard]] Expected<std::string> merge_pull_request(const RepoRecord& repo, int num, std::string_view author);

  // Access requests to gated repos (store_likes.cpp, with the likes: per-user rows of a repo).

  /// Every request of the repo: {user, status ("pending", "accepted", "rejected"), when}, oldest first.
  [[nodiscard]] Expected<std::vector<AccessRequest>> access_requests(const RepoRecord& repo) const;
  /// Sets `user`'s request to `status`. `create`: a missing request is made (a grant); otherwise
  /// EntryNotFound. Conflict when it already has that status.
  [[nodiscard]] Status set_access_request(const RepoRecord& repo, std::string_view user, std::string_view status,
                                          bool create);

  // Likes (store_likes.cpp).

  /// Records (or removes) `user`'s like of the repo; liking twice is one like.
  [[nodiscard]] Status set_like(const RepoRecord& repo, std::string_view user, bool liked);
  /// The users who like the repo, oldest like first.
  [[nodiscard]] Expected<std::vector<std::string>> likers(const RepoRecord& repo) const;
  /// The repos `user` likes (any case), newest like first, with when.
  [[nodiscard]] Expected<std::vector<std::pair<RepoRecord, std::int64_t>>> likes_of(std::string_view user) const;

  // Renames and history rewrites (store_rewrite.cpp).

  /// Renames (or transfers) a repo; the old id keeps pointing at it (find_redirect) until a repo
  /// takes that id. RepoNotFound for a missing `from`, Conflict when `to` exists.
  [[nodiscard]] Status move_repo(const RepoKey& from, const RepoKey& to);
  /// The repo a moved repo's old id now names, if any.
  [[nodiscard]] Expected<std::optional<RepoRecord>> find_redirect(const RepoKey& old_key) const;
  /// Replaces the history of branch `ref` (or refs/pr/N) by one root commit with its head's files.
  /// RevisionNotFound when the ref does not exist. Returns the new commit.
  [[nodiscard]] Expected<std::string> squash_history(const RepoRecord& repo, std::string_view ref,
                                                     std::string_view message, std::string_view author);
  /// LFS objects the repo's refs reach, each once (refs in order: main, branches, pull requests, tags).
  [[nodiscard]] Expected<std::vector<LfsObject>> list_lfs_objects(const RepoRecord& repo) const;
  /// Removes the LFS files with these sha256 from every commit reachable from the repo's refs,
  /// rewriting those histories (commit ids change). Returns how many distinct objects were found.
  [[nodiscard]] Expected<std::size_t> purge_lfs_objects(const RepoRecord& repo, const std::vector<std::string>& sha256s);

  /// Deletes what no commit can reach: trees of deleted repos, then blobs no tree references and
  /// abandoned uploads older than `options.grace`. Safe beside a server serving the same store, in
  /// this process or another: it holds the write transaction while it deletes, and a commit checks
  /// its blobs again inside its own transaction, so a commit never lands on a deleted blob (it
  /// fails with Integrity and the client uploads again).
  [[nodiscard]] Expected<GcReport> collect_garbage(const GcOptions& options);

  // Xet storage (docs/localhub.md "Xet"). A xorb's record bytes are a blob; its chunk table, the
  // files shards registered (terms) and which sha256 each file's content has live in SQLite.

  /// Restarts the garbage-collection age of a known xorb; false when the xorb is unknown.
  [[nodiscard]] Expected<bool> touch_xorb(const xet::Hash& xorb);
  /// Records a xorb whose record bytes are stored as blob `blob_sha256`. False when it was known.
  [[nodiscard]] Expected<bool> put_xorb(const xet::XorbIndex& index, std::string_view blob_sha256);
  [[nodiscard]] Expected<std::optional<StoredXorb>> find_xorb(const xet::Hash& xorb) const;
  /// Registers a file whose terms the caller checked against the stored xorbs, and the sha256 of
  /// its content (after which LFS entries with that oid name the file). False when both were known.
  [[nodiscard]] Expected<bool> put_xet_file(const XetFile& file, std::string_view sha256);
  [[nodiscard]] Expected<std::optional<XetFile>> find_xet_file(const xet::Hash& file) const;
  /// The Xet file a shard registered for content with this sha256, if any.
  [[nodiscard]] Expected<std::optional<xet::Hash>> xet_file_for(std::string_view sha256) const;
  /// Whether `repo` holds (holds_object) content whose Xet file hash is `file`.
  [[nodiscard]] Expected<bool> holds_xet_file(const RepoRecord& repo, const xet::Hash& file) const;
  /// The repo with this rowid (what Xet access tokens name); RepoNotFound when it was deleted.
  [[nodiscard]] Expected<RepoRecord> find_repo_by_id(std::int64_t rowid) const;

  [[nodiscard]] BlobStore& blobs();
  [[nodiscard]] const std::filesystem::path& root() const;

 private:
  struct Impl;
  explicit RepoStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace khub::localhub
