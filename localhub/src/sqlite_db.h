#pragma once
// Thin RAII layer over SQLite: a connection pool (one connection per concurrent caller, WAL mode),
// prepared statements with positional binding, and IMMEDIATE transactions.
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"

namespace khub::localhub::db {

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  [[nodiscard]] bool ok() const { return stmt_ != nullptr; }
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, std::int64_t value);
  /// Binds bytes as a BLOB (text binds are for text: SQLite compares and collates them).
  Statement& bind_blob(int index, std::string_view bytes);
  /// SQLITE_ROW → true, SQLITE_DONE → false; errors set error().
  bool step();
  [[nodiscard]] std::string text(int column) const;
  [[nodiscard]] std::int64_t integer(int column) const;
  [[nodiscard]] std::string blob(int column) const;
  [[nodiscard]] const std::optional<Error>& error() const { return error_; }
  /// Makes the statement runnable again with new bindings.
  void reset() {
    if (stmt_) { sqlite3_reset(stmt_); sqlite3_clear_bindings(stmt_); }
  }
  /// Runs to completion; the error, if any.
  [[nodiscard]] Status run();

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::optional<Error> error_;
};

class Connection {
 public:
  explicit Connection(sqlite3* db) : db_(db) {}
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  [[nodiscard]] sqlite3* get() const { return db_; }
  [[nodiscard]] Status exec(std::string_view sql);

 private:
  sqlite3* db_;
};

class Pool;

/// A connection borrowed from the pool; returns it on destruction.
class Lease {
 public:
  Lease(Pool* pool, std::unique_ptr<Connection> conn) : pool_(pool), conn_(std::move(conn)) {}
  Lease(Lease&&) = default;
  ~Lease();
  Connection& operator*() const { return *conn_; }
  Connection* operator->() const { return conn_.get(); }
  [[nodiscard]] sqlite3* get() const { return conn_->get(); }

 private:
  Pool* pool_;
  std::unique_ptr<Connection> conn_;
};

class Pool {
 public:
  /// Opens the database file, sets WAL mode, synchronous=FULL and a busy timeout.
  [[nodiscard]] static Expected<std::unique_ptr<Pool>> open(const std::filesystem::path& file);
  [[nodiscard]] Expected<Lease> acquire();
  void release(std::unique_ptr<Connection> conn);

 private:
  explicit Pool(std::filesystem::path file) : file_(std::move(file)) {}
  [[nodiscard]] Expected<std::unique_ptr<Connection>> connect() const;
  std::filesystem::path file_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

/// BEGIN IMMEDIATE … COMMIT; rolls back on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(Connection& conn) : conn_(conn) {}
  ~Transaction();
  [[nodiscard]] Status begin();
  [[nodiscard]] Status commit();

 private:
  Connection& conn_;
  bool open_ = false;
};

[[nodiscard]] Error sqlite_error(sqlite3* db, std::string_view what);

}  // namespace khub::localhub::db
