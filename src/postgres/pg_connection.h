// The one libpq layer (docs/spec/postgresql.md): a connection with statements prepared once
// per connection, binary parameters and results, and the mapping of libpq failures to Loom
// errors: a lost or refused connection, a server shutting down, a full disk or too many
// connections is UnavailableError (retryable); a serialization failure or deadlock is
// RetryTransaction (the caller runs its transaction again); a unique violation is
// ConflictError; a missing table is FailedPreconditionError (run `loom db migrate`). No
// message ever holds the password of the URL. A Connection is used by one thread at a time.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "loom/util/error.h"

namespace loom::postgres {

// A serialization failure or deadlock: the transaction was rolled back and may simply run again.
class RetryTransaction : public UnavailableError {
 public:
  using UnavailableError::UnavailableError;
};

// The connection broke while a statement was on its way or running (not: refused, or an error
// the server answered with): whether a statement that commits on its own took effect is unknown.
class ConnectionLost : public UnavailableError {
 public:
  using UnavailableError::UnavailableError;
};

// `url` with its password (if any) replaced by "***", for messages.
std::string redactUrl(std::string_view url);
// A message of libpq's about `url`, with every piece of its password masked: libpq quotes
// pieces of a URL it reads otherwise than meant (a raw '@', '/' or '%' in the password), and
// every quoted piece but a keyword when it cannot parse it at all.
std::string redactMessage(std::string_view message, std::string_view url);
// Why libpq would not read `url` as written (it cannot parse it, or a raw '@' in the password
// ends it early), masked and saying how to write it; nullopt when it reads.
std::optional<std::string> urlProblem(std::string_view url);

// One statement parameter, sent in binary: int8, text, bytea, bool, or SQL NULL of a type.
struct Param {
  static Param int64(int64_t v);
  static Param text(std::string_view v);
  static Param bytes(std::string_view v);
  static Param boolean(bool v);
  static Param optionalInt64(const std::optional<int64_t>& v);
  static Param optionalText(const std::optional<std::string>& v);
  // A one-dimensional array of `elements` (NULLs allowed), each of elementType's type (any
  // value of that type: an empty array still needs its type).
  static Param array(const Param& elementType, const std::vector<Param>& elements);

  Oid type = 0;
  std::string value;
  bool null = false;
};

// A result in binary format, freed on scope exit. Column accessors expect the column's type.
class Result {
 public:
  explicit Result(PGresult* r) : r_(r, &PQclear) {}
  int rows() const { return PQntuples(r_.get()); }
  bool isNull(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  std::string_view text(int row, int col) const;  // text and bytea
  int64_t int64(int row, int col) const;          // int8
  bool boolean(int row, int col) const;           // bool
  std::optional<int64_t> optionalInt64(int row, int col) const;
  std::optional<std::string> optionalText(int row, int col) const;
  // Rows a command changed (DELETE, UPDATE, INSERT).
  int64_t changed() const;

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> r_;
};

class Connection {
 public:
  // Connects and sets the search path to `schema` (an identifier: letters, digits, _).
  // Throws UnavailableError naming the redacted url when the server cannot be reached.
  Connection(const std::string& url, const std::string& schema);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs `sql` (prepared on first use on this connection; `sql` must outlive it: a literal or
  // a static, the cache is keyed by its address) with `params`; `op` names it in errors.
  Result exec(const char* sql, std::initializer_list<Param> params, std::string_view op);
  Result exec(const char* sql, const std::vector<Param>& params, std::string_view op);
  // Runs `sql` unprepared with `params` (for statements built at run time).
  Result execDynamic(const std::string& sql, const std::vector<Param>& params, std::string_view op);
  // Runs one or more statements without parameters (BEGIN, COMMIT, DDL).
  void run(const char* sql, std::string_view op);

  // True when the connection can no longer be used (lost, or a failure left it unknown).
  bool broken() const;
  // Reads what the server sent while the connection sat idle, without blocking: false when it
  // closed the connection meanwhile (a restart, a failover, a terminated backend).
  bool stillOpen();
  // True while a transaction is open (or failed and not yet rolled back).
  bool inTransaction() const;
  // After LISTEN on this connection: waits up to timeoutMillis for a notification and consumes
  // every one that arrived; true when any did. UnavailableError when the connection is lost.
  bool awaitNotification(int64_t timeoutMillis);

 private:
  Result check(PGresult* r, std::string_view op);
  template <typename Params>
  Result execWith(const char* sql, const Params& params, std::string_view op);

  PGconn* conn_ = nullptr;
  std::string redactedUrl_;
  std::unordered_map<const char*, std::string> prepared_;  // sql address -> statement name
  bool broken_ = false;
};

// Statements sent to a server by every Connection of this process so far (each a round trip,
// a prepare included): what the benchmarks report per step.
int64_t roundTrips();

// Checks that `schema` is a plain identifier (letters, digits and _, not starting with a
// digit, at most 63 bytes); throws ConfigError naming it otherwise.
void requireIdentifier(const std::string& schema);

}  // namespace loom::postgres
