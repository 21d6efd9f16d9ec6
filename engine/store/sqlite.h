#pragma once
// A thin RAII layer over SQLite: a connection in WAL mode with a busy timeout, prepared
// statements with typed binding, and write transactions that take the write lock up front
// (BEGIN IMMEDIATE) so concurrent writers queue on the busy timeout instead of failing with
// "database is locked" on a lock upgrade.

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace mavg::sql {

// A column value: NULL, integer, real or text.
using Value = std::variant<std::monostate, int64_t, double, std::string>;

class Statement;

enum class OpenMode {
  kReadWrite,  // creates the file if needed; WAL journal
  kReadOnly,   // reads only: no WAL switch; a file or folder this process cannot write (an
               // archive, a read-only mount) is opened immutable, without locks or -shm
};

// Whether this process could write the database `path` and its -wal/-shm files beside it.
bool Writable(const std::string& path);

class Database {
 public:
  // Opens `path` (kReadWrite: creating it if needed; WAL journal, busy timeout, foreign keys
  // on). Throws naming the file when it cannot be opened or is not a database.
  explicit Database(const std::string& path, int busy_timeout_ms = 60000,
                    OpenMode mode = OpenMode::kReadWrite);
  bool ReadOnly() const { return read_only_; }
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::string& Path() const { return path_; }
  // Runs one or more statements without results.
  void Exec(const std::string& sql);
  Statement Prepare(const std::string& sql);
  int64_t UserVersion();
  void SetUserVersion(int64_t v);
  sqlite3* Raw() { return db_; }
  // Throws a mavg::Error naming the database and `what` for an SQLite result code.
  [[noreturn]] void Fail(int code, const std::string& what) const;

 private:
  std::string path_;
  bool read_only_ = false;
  sqlite3* db_ = nullptr;  // owned
};

class Statement {
 public:
  Statement(Database& db, const std::string& sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;

  // Binds parameters 1..n in order; returns *this for chaining.
  Statement& Bind(int index, const Value& v);
  Statement& Bind(int index, const char* text) { return Bind(index, Value(std::string(text))); }
  Statement& Bind(int index, int v) { return Bind(index, Value(static_cast<int64_t>(v))); }
  // Steps once; true while a row is available.
  bool Step();
  // Executes to completion (for statements without rows), then resets for reuse.
  void Run();
  void Reset();
  int Columns() const;
  Value Column(int i) const;
  std::string Text(int i) const;
  int64_t Int(int i) const;
  double Real(int i) const;
  bool IsNull(int i) const;

 private:
  Database* db_;                  // [not null], not owned
  sqlite3_stmt* stmt_ = nullptr;  // owned
  std::string sql_;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back if destroyed without Commit().
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  void Commit();

 private:
  Database* db_;
  bool done_ = false;
};

}  // namespace mavg::sql
