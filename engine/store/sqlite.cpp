#include "engine/store/sqlite.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "engine/core/error.h"

namespace mavg::sql {

namespace {

// A file: URI for `path`, with the characters URIs reserve percent-encoded.
std::string FileUri(const std::string& path, const char* query) {
  std::string out = "file:";
  for (const unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7F) {
      out += fmt::format("%{:02X}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "?" + query;
}

}  // namespace

bool Writable(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  return ::access(path.c_str(), W_OK) == 0 && ::access(dir.c_str(), W_OK) == 0;
}

Database::Database(const std::string& path, int busy_timeout_ms, OpenMode mode)
    : path_(path), read_only_(mode == OpenMode::kReadOnly) {
  int rc = SQLITE_OK;
  if (read_only_ && path != ":memory:") {
    // mode=ro still needs the -shm file of a WAL database; where it cannot be written nobody
    // else can write the database either, so it is read as immutable.
    const std::string uri = FileUri(path, Writable(path) ? "mode=ro" : "immutable=1");
    rc = sqlite3_open_v2(uri.c_str(), &db_,
                         SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  } else {
    rc = sqlite3_open_v2(path.c_str(), &db_,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  }
  if (rc != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    MAVG_FAIL("{}: cannot open the results database: {}", path, msg);
  }
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  try {
    if (read_only_) {
      // A file that is not a database fails here (SQLITE_NOTADB) with a clear message.
      Statement probe(*this, "PRAGMA schema_version");
      probe.Step();
      Exec("PRAGMA foreign_keys=ON;");
      return;
    }
    // A file that is not a database fails here (SQLITE_NOTADB) with a clear message. Switching a
    // new database to WAL needs a lock that the busy handler does not wait for, so two
    // processes opening it at once retry here instead of failing.
    for (int waited_ms = 0;; waited_ms += 20) {
      {
        Statement mode_pragma(*this, "PRAGMA journal_mode");  // finalized before the switch
        if (mode_pragma.Step() && mode_pragma.Text(0) == "wal") break;
      }
      char* err = nullptr;
      const int code = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, &err);
      sqlite3_free(err);
      if (code == SQLITE_OK) break;
      if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) || waited_ms >= busy_timeout_ms) {
        Fail(code, "cannot switch to WAL mode");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    Exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

Database::~Database() {
  if (db_) sqlite3_close(db_);
}

void Database::Fail(int code, const std::string& what) const {
  MAVG_FAIL("{}: {}: {} ({})", path_, what, db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code),
            sqlite3_errstr(code));
}

void Database::Exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    MAVG_FAIL("{}: {} (in: {})", path_, msg, sql.substr(0, 80));
  }
}

Statement Database::Prepare(const std::string& sql) { return Statement(*this, sql); }

int64_t Database::UserVersion() {
  Statement s(*this, "PRAGMA user_version");
  s.Step();
  return s.Int(0);
}

void Database::SetUserVersion(int64_t v) { Exec("PRAGMA user_version=" + std::to_string(v)); }

Statement::Statement(Database& db, const std::string& sql) : db_(&db), sql_(sql) {
  const int rc = sqlite3_prepare_v2(db.Raw(), sql.c_str(), -1, &stmt_, nullptr);
  if (rc != SQLITE_OK) db.Fail(rc, "cannot prepare '" + sql.substr(0, 60) + "'");
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), sql_(std::move(other.sql_)) {
  other.stmt_ = nullptr;
}

Statement& Statement::Bind(int index, const Value& v) {
  int rc = SQLITE_OK;
  if (std::holds_alternative<std::monostate>(v)) {
    rc = sqlite3_bind_null(stmt_, index);
  } else if (const auto* i = std::get_if<int64_t>(&v)) {
    rc = sqlite3_bind_int64(stmt_, index, *i);
  } else if (const auto* d = std::get_if<double>(&v)) {
    rc = sqlite3_bind_double(stmt_, index, *d);
  } else {
    const std::string& s = std::get<std::string>(v);
    rc = sqlite3_bind_text(stmt_, index, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  if (rc != SQLITE_OK) db_->Fail(rc, "bind failed");
  return *this;
}

bool Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->Fail(rc, "'" + sql_.substr(0, 60) + "' failed");
}

void Statement::Run() {
  while (Step()) {
  }
  Reset();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::Columns() const { return sqlite3_column_count(stmt_); }

Value Statement::Column(int i) const {
  switch (sqlite3_column_type(stmt_, i)) {
    case SQLITE_INTEGER:
      return Value(static_cast<int64_t>(sqlite3_column_int64(stmt_, i)));
    case SQLITE_FLOAT:
      return Value(sqlite3_column_double(stmt_, i));
    case SQLITE_NULL:
      return Value();
    default:
      return Value(Text(i));
  }
}

std::string Statement::Text(int i) const {
  const auto* p = sqlite3_column_text(stmt_, i);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(stmt_, i)))
           : std::string();
}

int64_t Statement::Int(int i) const { return sqlite3_column_int64(stmt_, i); }
double Statement::Real(int i) const { return sqlite3_column_double(stmt_, i); }
bool Statement::IsNull(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }

Transaction::Transaction(Database& db) : db_(&db) { db.Exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) {
    try {
      db_->Exec("ROLLBACK");
    } catch (...) {
    }
  }
}

void Transaction::Commit() {
  db_->Exec("COMMIT");
  done_ = true;
}

}  // namespace mavg::sql
