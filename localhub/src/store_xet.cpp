// RepoStore's Xet tables: xorbs (their record bytes are blobs; the chunk table is a packed BLOB),
// the files shards registered (one row per term) and the sha256 of each file's content.
#include <chrono>
#include <cstring>

#include "khub/localhub/store.h"
#include "store_impl.h"

namespace khub::localhub {

namespace {
constexpr std::string_view kXetSchema = R"sql(
CREATE TABLE IF NOT EXISTS xet_xorbs(
  hash TEXT PRIMARY KEY, blob_sha256 TEXT NOT NULL, chunks BLOB NOT NULL,
  created_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS xet_files(
  file_hash TEXT PRIMARY KEY, size INTEGER NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS xet_terms(
  file_hash TEXT NOT NULL, idx INTEGER NOT NULL, xorb TEXT NOT NULL, chunk_start INTEGER NOT NULL,
  chunk_end INTEGER NOT NULL, unpacked INTEGER NOT NULL, PRIMARY KEY(file_hash, idx)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS xet_terms_by_xorb ON xet_terms(xorb);
CREATE TABLE IF NOT EXISTS xet_sha256(
  sha256 TEXT PRIMARY KEY, file_hash TEXT NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS xet_sha256_by_file ON xet_sha256(file_hash);
)sql";

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A chunk-table row: raw chunk hash (32 bytes), record end and content size (u32 little-endian).
// Record starts and content offsets follow from the previous row.
constexpr std::size_t kChunkRow = 40;

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t get_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

std::string pack_chunks(const std::vector<xet::XorbChunk>& chunks) {
  std::string out;
  out.reserve(chunks.size() * kChunkRow);
  for (const auto& c : chunks) {
    out.append(reinterpret_cast<const char*>(c.hash.bytes.data()), c.hash.bytes.size());
    put_u32(out, c.record_end);
    put_u32(out, c.unpacked_size);
  }
  return out;
}

Expected<std::vector<xet::XorbChunk>> unpack_chunks(const std::string& packed, std::string_view xorb) {
  if (packed.empty() || packed.size() % kChunkRow != 0)
    return Error(ErrorCode::Io, "chunk table of xorb " + std::string(xorb) + " is damaged");
  std::vector<xet::XorbChunk> chunks(packed.size() / kChunkRow);
  std::uint32_t record = 0, content = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const char* row = packed.data() + i * kChunkRow;
    auto& c = chunks[i];
    std::memcpy(c.hash.bytes.data(), row, 32);
    c.record_start = record;
    c.record_end = get_u32(row + 32);
    c.unpacked_start = content;
    c.unpacked_size = get_u32(row + 36);
    if (c.record_end <= c.record_start)
      return Error(ErrorCode::Io, "chunk table of xorb " + std::string(xorb) + " is damaged");
    record = c.record_end;
    content += c.unpacked_size;
  }
  return chunks;
}
}  // namespace

Status create_xet_tables(db::Connection& conn) { return conn.exec(kXetSchema); }

Status collect_xet_garbage(db::Connection& conn, std::int64_t cutoff, GcReport& report) {
  // Files stay while a commit has their content, or while they are young (a commit may be on its
  // way); xorbs while a remaining file uses them, or while they are young.
  db::Statement files(conn.get(),
                      "DELETE FROM xet_sha256 WHERE created_at < ?1 AND sha256 NOT IN (SELECT sha256 FROM tree_files "
                      "WHERE lfs = 1 AND tree_oid IN (SELECT tree_oid FROM commits))");
  files.bind(1, cutoff);
  KHUB_CHECK(files.run());
  db::Statement unused(conn.get(),
                       "DELETE FROM xet_files WHERE created_at < ?1 AND file_hash NOT IN (SELECT file_hash FROM xet_sha256)");
  unused.bind(1, cutoff);
  KHUB_CHECK(unused.run());
  KHUB_CHECK(conn.exec("DELETE FROM xet_terms WHERE file_hash NOT IN (SELECT file_hash FROM xet_files);"));
  db::Statement xorbs(conn.get(),
                      "DELETE FROM xet_xorbs WHERE created_at < ?1 AND hash NOT IN (SELECT xorb FROM xet_terms)");
  xorbs.bind(1, cutoff);
  KHUB_CHECK(xorbs.run());
  report.xorbs_removed = static_cast<std::uint64_t>(sqlite3_changes(conn.get()));
  return {};
}

Expected<bool> RepoStore::touch_xorb(const xet::Hash& xorb) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(), "UPDATE xet_xorbs SET created_at=?2 WHERE hash=?1");
  st.bind(1, xorb.str()).bind(2, now_seconds());
  KHUB_CHECK(st.run());
  return sqlite3_changes(conn.get()) > 0;
}

Expected<bool> RepoStore::put_xorb(const xet::XorbIndex& index, std::string_view blob_sha256) {
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(),
                   "INSERT OR IGNORE INTO xet_xorbs(hash, blob_sha256, chunks, created_at) VALUES(?1,?2,?3,?4)");
  st.bind(1, index.hash.str()).bind(2, blob_sha256).bind_blob(3, pack_chunks(index.chunks)).bind(4, now_seconds());
  KHUB_CHECK(st.run());
  return sqlite3_changes(conn.get()) > 0;
}

Expected<std::optional<StoredXorb>> RepoStore::find_xorb(const xet::Hash& xorb) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  const auto name = xorb.str();
  db::Statement st(conn.get(), "SELECT blob_sha256, chunks FROM xet_xorbs WHERE hash=?1");
  st.bind(1, name);
  if (!st.step()) {
    if (st.error()) return *st.error();
    return std::optional<StoredXorb>();
  }
  StoredXorb x;
  x.blob_sha256 = st.text(0);
  KHUB_TRY(x.chunks, unpack_chunks(st.blob(1), name));
  return std::optional<StoredXorb>(std::move(x));
}

Expected<bool> RepoStore::put_xet_file(const XetFile& file, std::string_view sha256) {
  const auto name = file.hash.str();
  const auto now = now_seconds();
  std::lock_guard lock(impl_->write_mutex);
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Transaction tx(*conn);
  KHUB_CHECK(tx.begin());
  bool inserted = false;
  db::Statement ins(conn.get(), "INSERT OR IGNORE INTO xet_files(file_hash, size, created_at) VALUES(?1,?2,?3)");
  ins.bind(1, name).bind(2, static_cast<std::int64_t>(file.size)).bind(3, now);
  KHUB_CHECK(ins.run());
  if (sqlite3_changes(conn.get()) > 0) {
    inserted = true;
    db::Statement term(conn.get(),
                       "INSERT INTO xet_terms(file_hash, idx, xorb, chunk_start, chunk_end, unpacked) "
                       "VALUES(?1,?2,?3,?4,?5,?6)");
    for (std::size_t i = 0; i < file.terms.size(); ++i) {
      const auto& t = file.terms[i];
      term.reset();
      term.bind(1, name).bind(2, static_cast<std::int64_t>(i)).bind(3, t.xorb.str());
      term.bind(4, std::int64_t{t.chunk_start}).bind(5, std::int64_t{t.chunk_end}).bind(6, std::int64_t{t.unpacked_bytes});
      KHUB_CHECK(term.run());
    }
  } else {  // known: its garbage-collection age restarts, as a re-uploaded blob's does
    db::Statement touch(conn.get(), "UPDATE xet_files SET created_at=?2 WHERE file_hash=?1");
    touch.bind(1, name).bind(2, now);
    KHUB_CHECK(touch.run());
  }
  db::Statement known(conn.get(), "SELECT 1 FROM xet_sha256 WHERE sha256=?1");
  known.bind(1, sha256);
  if (!known.step()) {
    if (known.error()) return *known.error();
    inserted = true;
  }
  db::Statement link(conn.get(),
                     "INSERT INTO xet_sha256(sha256, file_hash, created_at) VALUES(?1,?2,?3) "
                     "ON CONFLICT(sha256) DO UPDATE SET created_at=excluded.created_at");
  link.bind(1, sha256).bind(2, name).bind(3, now);
  KHUB_CHECK(link.run());
  KHUB_CHECK(tx.commit());
  return inserted;
}

Expected<std::optional<XetFile>> RepoStore::find_xet_file(const xet::Hash& file) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  const auto name = file.str();
  db::Statement head(conn.get(), "SELECT size FROM xet_files WHERE file_hash=?1");
  head.bind(1, name);
  if (!head.step()) {
    if (head.error()) return *head.error();
    return std::optional<XetFile>();
  }
  XetFile f;
  f.hash = file;
  f.size = static_cast<std::uint64_t>(head.integer(0));
  db::Statement terms(conn.get(),
                      "SELECT xorb, chunk_start, chunk_end, unpacked FROM xet_terms WHERE file_hash=?1 ORDER BY idx");
  terms.bind(1, name);
  while (terms.step()) {
    auto xorb = xet::parse_hash(terms.text(0));
    if (!xorb) return Error(ErrorCode::Io, "terms of Xet file " + name + " are damaged");
    f.terms.push_back(xet::FileTerm{*xorb, static_cast<std::uint32_t>(terms.integer(1)),
                                    static_cast<std::uint32_t>(terms.integer(2)),
                                    static_cast<std::uint32_t>(terms.integer(3)), {}});
  }
  if (terms.error()) return *terms.error();
  return std::optional<XetFile>(std::move(f));
}

Expected<std::optional<xet::Hash>> RepoStore::xet_file_for(std::string_view sha256) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(), "SELECT file_hash FROM xet_sha256 WHERE sha256=?1");
  st.bind(1, sha256);
  if (st.step()) return xet::parse_hash(st.text(0));
  if (st.error()) return *st.error();
  return std::optional<xet::Hash>();
}

Expected<bool> RepoStore::holds_xet_file(const RepoRecord& repo, const xet::Hash& file) const {
  std::vector<std::string> contents;
  {
    KHUB_TRY(auto conn, impl_->pool->acquire());
    db::Statement st(conn.get(), "SELECT sha256 FROM xet_sha256 WHERE file_hash=?1");
    st.bind(1, file.str());
    while (st.step()) contents.push_back(st.text(0));
    if (st.error()) return *st.error();
  }
  for (const auto& sha256 : contents) {
    KHUB_TRY(bool held, holds_object(repo, sha256));
    if (held) return true;
  }
  return false;
}

Expected<RepoRecord> RepoStore::find_repo_by_id(std::int64_t rowid) const {
  KHUB_TRY(auto conn, impl_->pool->acquire());
  db::Statement st(conn.get(), "SELECT type, ns, name FROM repos WHERE id=?1");
  st.bind(1, rowid);
  if (!st.step()) {
    if (st.error()) return *st.error();
    return Error(ErrorCode::RepoNotFound, "repo " + std::to_string(rowid) + " not found");
  }
  RepoKey key{repo_type_from_name(st.text(0)).value_or(RepoType::Model), st.text(1), st.text(2)};
  KHUB_TRY(auto repo, find_repo(key));
  if (repo.rowid != rowid) return Error(ErrorCode::RepoNotFound, "repo " + std::to_string(rowid) + " not found");
  return repo;
}

}  // namespace khub::localhub
