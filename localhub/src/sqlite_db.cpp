#include "sqlite_db.h"

namespace khub::localhub::db {

Error sqlite_error(sqlite3* db, std::string_view what) {
  return Error(ErrorCode::Io, std::string(what) + ": sqlite: " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK) {
    error_ = sqlite_error(db, "prepare");
    stmt_ = nullptr;
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, std::string_view text) {
  if (stmt_) sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  if (stmt_) sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::bind_blob(int index, std::string_view bytes) {
  if (stmt_) sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  return *this;
}

bool Statement::step() {
  if (!stmt_ || error_) return false;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) error_ = sqlite_error(db_, "step");
  return false;
}

std::string Statement::text(int column) const {
  auto* p = sqlite3_column_text(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
           : std::string();
}

std::int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string Statement::blob(int column) const {
  auto* p = sqlite3_column_blob(stmt_, column);
  return p ? std::string(static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
           : std::string();
}

Status Statement::run() {
  while (step()) {
  }
  if (error_) return *error_;
  return {};
}

Connection::~Connection() { sqlite3_close_v2(db_); }

Status Connection::exec(std::string_view sql) {
  std::string s(sql);
  char* msg = nullptr;
  if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string text = msg ? msg : "unknown error";
    sqlite3_free(msg);
    return Error(ErrorCode::Io, "sqlite: " + text);
  }
  return {};
}

Lease::~Lease() {
  if (pool_ && conn_) pool_->release(std::move(conn_));
}

Expected<std::unique_ptr<Pool>> Pool::open(const std::filesystem::path& file) {
  std::unique_ptr<Pool> pool(new Pool(file));
  KHUB_TRY(auto first, pool->connect());
  KHUB_CHECK(first->exec("PRAGMA journal_mode=WAL;"));
  pool->release(std::move(first));
  return pool;
}

Expected<std::unique_ptr<Connection>> Pool::connect() const {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(file_.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  auto conn = std::make_unique<Connection>(raw);
  if (rc != SQLITE_OK) return sqlite_error(raw, "open " + file_.string());
  sqlite3_busy_timeout(raw, 30000);
  KHUB_CHECK(conn->exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"));
  return conn;
}

Expected<Lease> Pool::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(conn));
    }
  }
  KHUB_TRY(auto conn, connect());
  return Lease(this, std::move(conn));
}

void Pool::release(std::unique_ptr<Connection> conn) {
  std::lock_guard lock(mutex_);
  if (idle_.size() < 32) idle_.push_back(std::move(conn));
}

Transaction::~Transaction() {
  if (open_) (void)conn_.exec("ROLLBACK;");
}

Status Transaction::begin() {
  KHUB_CHECK(conn_.exec("BEGIN IMMEDIATE;"));
  open_ = true;
  return {};
}

Status Transaction::commit() {
  KHUB_CHECK(conn_.exec("COMMIT;"));
  open_ = false;
  return {};
}

}  // namespace khub::localhub::db
