#include "pg_connection.h"

#include <endian.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

namespace loom::postgres {
namespace {

std::atomic<int64_t> sent{0};

constexpr Oid kBoolOid = 16;
constexpr Oid kByteaOid = 17;
constexpr Oid kInt8Oid = 20;
constexpr Oid kTextOid = 25;

std::string trimmed(const char* message) {
  std::string m = message != nullptr ? message : "";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

// The Loom error for a failed statement with SQLSTATE `state` (empty: none, e.g. the
// connection dropped before the server answered).
[[noreturn]] void throwFor(std::string_view state, const std::string& what, bool connectionLost) {
  auto is = [&](std::string_view s) { return state == s; };
  auto classIs = [&](std::string_view c) { return state.substr(0, 2) == c; };
  if (connectionLost || state.empty()) {
    // No answer: whether a statement that commits on its own took effect is unknown.
    throw ConnectionLost(what +
                         " (the connection to the server was lost; the call can be retried "
                         "once the server is reachable)");
  }
  if (classIs("08") || is("57P01") || is("57P02") || is("57P03")) {
    throw UnavailableError(what +
                           " (the connection to the server was lost or refused; the "
                           "call can be retried once the server is reachable)");
  }
  if (is("40001") || is("40P01")) throw RetryTransaction(what);
  // A lock or statement timeout, a cancel, a read-only server (a standby after a failover), a
  // rolled-back integrity check, a cached plan a migration invalidated: retry later.
  if (is("55P03") || is("57014") || is("25006") || is("40003") || is("0A000")) {
    throw UnavailableError(what + " (retryable: the server could not run it now)");
  }
  if (is("23505")) throw ConflictError(what);
  if (classIs("53")) {
    throw UnavailableError(what +
                           " (the server is out of a resource: disk, memory or "
                           "connections; retry once it has room)");
  }
  if (is("42P01") || is("3F000")) {
    throw FailedPreconditionError(what + " (Loom's tables are not there: run `loom db migrate`)");
  }
  if (classIs("22")) throw InvalidArgumentError(what);
  throw InternalError(what);
}

std::string bigEndian(int64_t v) {
  uint64_t be = htobe64(static_cast<uint64_t>(v));
  return std::string(reinterpret_cast<const char*>(&be), sizeof be);
}

void appendInt32(std::string& out, int32_t v) {
  uint32_t be = htobe32(static_cast<uint32_t>(v));
  out.append(reinterpret_cast<const char*>(&be), sizeof be);
}

// The array type of each element type Param makes.
Oid arrayTypeOf(Oid element) {
  switch (element) {
    case kBoolOid:
      return 1000;
    case kByteaOid:
      return 1001;
    case kInt8Oid:
      return 1016;
    case kTextOid:
      return 1009;
    default:
      throw InternalError("postgresql: no array type for element type " + std::to_string(element));
  }
}

}  // namespace

namespace {

std::string lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// [begin, end) of a URL's password as written: from the user's ':' to the last '@' before
// the parameters, so one written with a raw '@' or '/' (not percent-encoded) counts whole.
std::optional<std::pair<std::size_t, std::size_t>> urlPasswordSpan(std::string_view url) {
  auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::nullopt;
  auto start = scheme + 3;
  auto query = url.find('?', start);
  auto at = url.rfind('@', query == std::string_view::npos ? std::string_view::npos : query - 1);
  auto colon = url.find(':', start);
  if (at == std::string_view::npos || at < start || colon == std::string_view::npos ||
      colon >= at) {
    return std::nullopt;
  }
  return std::make_pair(colon + 1, at);
}

// password=... as a keyword (any case; spaces around '=' allowed, quoted or not) or a URL
// parameter, its value replaced by "***".
std::string maskPasswordKeywords(std::string out) {
  for (std::size_t pos = 0; (pos = lowered(out).find("password", pos)) != std::string::npos;) {
    std::size_t eq = out.find_first_not_of(' ', pos + 8);
    if (eq == std::string::npos || out[eq] != '=') {
      pos += 8;
      continue;
    }
    std::size_t begin = out.find_first_not_of(' ', eq + 1);
    if (begin == std::string::npos) break;
    std::size_t end = begin;
    if (out[begin] == '\'') {
      for (end = begin + 1; end < out.size() && out[end] != '\''; ++end) {
        if (out[end] == '\\') ++end;
      }
      end = std::min(end + 1, out.size());
    } else {
      end = out.find_first_of(" &", begin);
      if (end == std::string::npos) end = out.size();
    }
    out.replace(begin, end - begin, "***");
    pos = begin + 3;
  }
  return out;
}

// Whether libpq parses `url`; `password` gets the password it reads (empty: none).
bool parses(const std::string& url, std::string& password) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (error != nullptr) PQfreemem(error);
  if (options == nullptr) return false;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (std::string_view(o->keyword) == "password" && o->val != nullptr) password = o->val;
  }
  PQconninfoFree(options);
  return true;
}

// What of `url` must never be shown: the password libpq reads; a URL's password as written
// and its pieces between '@', '/', ':', '%' and the like (libpq's messages quote such pieces
// of a URL it reads otherwise than meant); a keyword-form password= value.
std::vector<std::string> secretsOf(const std::string& url) {
  std::vector<std::string> out;
  std::string password;
  parses(url, password);
  if (!password.empty()) out.push_back(password);
  if (auto span = urlPasswordSpan(url)) {
    std::string written = url.substr(span->first, span->second - span->first);
    out.push_back(written);
    for (std::size_t b = 0; b < written.size();) {
      std::size_t e = written.find_first_of("@/:?#%&= ", b);
      if (e == std::string::npos) e = written.size();
      if (e - b >= 2) out.push_back(written.substr(b, e - b));
      b = e + 1;
    }
  }
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

std::string maskAll(std::string text, const std::vector<std::string>& secrets) {
  for (const auto& secret : secrets) {
    if (secret.empty()) continue;
    for (std::size_t pos = 0; (pos = text.find(secret, pos)) != std::string::npos;) {
      text.replace(pos, secret.size(), "***");
      pos += 3;
    }
  }
  return text;
}

// Every "quoted" piece of `message` but a libpq keyword ("port", "PASSWORD"): what libpq
// quotes of a connection string it cannot parse is a piece of it, perhaps of the password.
std::string maskQuoted(std::string message) {
  std::vector<std::string> keywords;
  if (PQconninfoOption* defaults = PQconndefaults()) {
    for (PQconninfoOption* o = defaults; o->keyword != nullptr; ++o) keywords.push_back(o->keyword);
    PQconninfoFree(defaults);
  }
  for (std::size_t open = message.find('"'); open != std::string::npos;) {
    std::size_t close = message.find('"', open + 1);
    if (close == std::string::npos) break;
    std::string quoted = lowered(message.substr(open + 1, close - open - 1));
    if (std::find(keywords.begin(), keywords.end(), quoted) != keywords.end()) {
      open = message.find('"', close + 1);
      continue;
    }
    message.replace(open + 1, close - open - 1, "***");
    open = message.find('"', open + 5);
  }
  return message;
}

// A URL's password, and password= values, masked wherever they are in `text`.
std::string maskUrlShapes(std::string text) {
  if (auto span = urlPasswordSpan(text)) {
    text.replace(span->first, span->second - span->first, "***");
  }
  return maskPasswordKeywords(std::move(text));
}

}  // namespace

std::string redactUrl(std::string_view url) {
  std::string original(url);
  std::string ignored;
  // Where the password of a string libpq cannot parse begins and ends is unknowable.
  if (!parses(original, ignored)) return "(a connection string libpq cannot parse)";
  // Whatever form it had, the password libpq reads never appears.
  return maskAll(maskUrlShapes(original), secretsOf(original));
}

std::optional<std::string> urlProblem(std::string_view url) {
  const std::string advice =
      "; percent-encode '@', '/', ':' and '%' in a password (%40, %2F, %3A, %25), or leave the "
      "password out of it and use PGPASSWORD or ~/.pgpass";
  std::string original(url);
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(original.c_str(), &error);
  std::string why = error != nullptr ? trimmed(error) : "out of memory";
  if (error != nullptr) PQfreemem(error);
  if (options == nullptr) return "libpq cannot parse it: " + redactMessage(why, url) + advice;
  PQconninfoFree(options);
  auto span = urlPasswordSpan(original);
  // No password when the user part (up to the first '@') has no ':' ("u@h:5432/db@x").
  auto scheme = original.find("://");
  auto firstAt = original.find('@', scheme == std::string::npos ? 0 : scheme + 3);
  if (scheme == std::string::npos || firstAt == std::string::npos ||
      original.substr(scheme + 3, firstAt - scheme - 3).find(':') == std::string::npos) {
    span.reset();
  }
  if (span && original.find('@', span->first) < span->second) {
    return "its password holds a raw '@', which libpq reads as the end of the password" + advice;
  }
  if (span && original.find('/', span->first) < span->second) {
    return "its password holds a raw '/', where libpq ends the server's address (it would take "
           "the user name for the host and the password's start for the port)" +
           advice;
  }
  return std::nullopt;
}

std::string redactMessage(std::string_view message, std::string_view url) {
  std::string original(url);
  std::string out = maskAll(maskUrlShapes(std::string(message)), secretsOf(original));
  std::string ignored;
  return parses(original, ignored) ? out : maskQuoted(std::move(out));
}

Param Param::int64(int64_t v) { return {kInt8Oid, bigEndian(v), false}; }
Param Param::text(std::string_view v) { return {kTextOid, std::string(v), false}; }
Param Param::bytes(std::string_view v) { return {kByteaOid, std::string(v), false}; }
Param Param::boolean(bool v) { return {kBoolOid, std::string(1, v ? '\1' : '\0'), false}; }
Param Param::optionalInt64(const std::optional<int64_t>& v) {
  return v ? int64(*v) : Param{kInt8Oid, {}, true};
}
Param Param::optionalText(const std::optional<std::string>& v) {
  return v ? text(*v) : Param{kTextOid, {}, true};
}
Param Param::array(const Param& elementType, const std::vector<Param>& elements) {
  // The binary array format (array_send): dimensions, a has-nulls flag, the element type, the
  // one dimension's length and lower bound, then each element as its length (-1: NULL) and bytes.
  std::string out;
  appendInt32(out, 1);
  bool nulls = std::any_of(elements.begin(), elements.end(), [](const Param& e) { return e.null; });
  appendInt32(out, nulls ? 1 : 0);
  appendInt32(out, static_cast<int32_t>(elementType.type));
  appendInt32(out, static_cast<int32_t>(elements.size()));
  appendInt32(out, 1);
  for (const Param& e : elements) {
    if (e.type != elementType.type) {
      throw InternalError("postgresql: an array parameter mixes element types");
    }
    appendInt32(out, e.null ? -1 : static_cast<int32_t>(e.value.size()));
    if (!e.null) out += e.value;
  }
  return {arrayTypeOf(elementType.type), std::move(out), false};
}

std::string_view Result::text(int row, int col) const {
  return {PQgetvalue(r_.get(), row, col),
          static_cast<std::size_t>(PQgetlength(r_.get(), row, col))};
}

int64_t Result::int64(int row, int col) const {
  if (PQgetlength(r_.get(), row, col) != 8) {
    throw DataLossError("postgresql: column " + std::to_string(col) + " is not an int8 value");
  }
  uint64_t be = 0;
  std::memcpy(&be, PQgetvalue(r_.get(), row, col), sizeof be);
  return static_cast<int64_t>(be64toh(be));
}

bool Result::boolean(int row, int col) const {
  if (isNull(row, col) || PQgetlength(r_.get(), row, col) != 1) {
    throw DataLossError("postgresql: column " + std::to_string(col) + " is not a bool value");
  }
  return PQgetvalue(r_.get(), row, col)[0] != 0;
}

std::optional<int64_t> Result::optionalInt64(int row, int col) const {
  if (isNull(row, col)) return std::nullopt;
  return int64(row, col);
}

std::optional<std::string> Result::optionalText(int row, int col) const {
  if (isNull(row, col)) return std::nullopt;
  return std::string(text(row, col));
}

int64_t Result::changed() const {
  const char* n = PQcmdTuples(r_.get());
  return n != nullptr && *n != '\0' ? std::stoll(n) : 0;
}

void requireIdentifier(const std::string& schema) {
  bool ok = !schema.empty() && schema.size() <= 63 && !(schema[0] >= '0' && schema[0] <= '9');
  for (char c : schema) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  }
  if (!ok) {
    throw ConfigError("postgresql schema '" + schema +
                      "' is not a plain identifier: use lower-case letters, digits and _ "
                      "(at most 63, not starting with a digit)");
  }
}

Connection::Connection(const std::string& url, const std::string& schema)
    : redactedUrl_(redactUrl(url)) {
  requireIdentifier(schema);
  conn_ = PQconnectdb(url.c_str());
  if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) {
    std::string why = conn_ != nullptr ? trimmed(PQerrorMessage(conn_)) : "out of memory";
    if (conn_ != nullptr) PQfinish(conn_);
    conn_ = nullptr;
    std::optional<std::string> problem = urlProblem(url);
    throw UnavailableError("cannot connect to postgresql at " + redactedUrl_ + ": " +
                           redactMessage(why, url) + (problem ? "; the url: " + *problem : "") +
                           "; check the url and that the server runs and accepts connections");
  }
  // Notices (a CREATE ... IF NOT EXISTS that skipped, a server shutting down) are not errors
  // and go nowhere: every failure reaches the caller as an error.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
  std::string set = "SET search_path TO \"" + schema + "\"";
  try {
    check(PQexec(conn_, set.c_str()), "set the search path");
  } catch (...) {
    PQfinish(conn_);
    throw;
  }
}

Connection::~Connection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

bool Connection::broken() const { return broken_ || PQstatus(conn_) != CONNECTION_OK; }

bool Connection::stillOpen() {
  // An idle connection that listens for nothing has nothing to read: any input (the server's
  // FATAL before it closes, or the close itself) means the server is ending it.
  pollfd p{PQsocket(conn_), POLLIN, 0};
  int ready = 1;
  if (p.fd >= 0) {
    do {
      ready = ::poll(&p, 1, 0);
    } while (ready < 0 && errno == EINTR);
  }
  if (broken_ || ready != 0 || PQstatus(conn_) != CONNECTION_OK) {
    broken_ = true;
    return false;
  }
  return true;
}

bool Connection::awaitNotification(int64_t timeoutMillis) {
  auto drain = [this] {
    if (PQconsumeInput(conn_) == 0) {
      broken_ = true;
      throw UnavailableError(
          "lost the connection to postgresql at " + redactedUrl_ +
          " while listening for work: " + maskUrlShapes(trimmed(PQerrorMessage(conn_))));
    }
    bool any = false;
    while (PGnotify* n = PQnotifies(conn_)) {
      any = true;
      PQfreemem(n);
    }
    return any;
  };
  if (drain()) return true;
  pollfd p{PQsocket(conn_), POLLIN, 0};
  int ready = 0;
  do {
    ready = ::poll(&p, 1, static_cast<int>(timeoutMillis));
  } while (ready < 0 && errno == EINTR);
  return ready > 0 && drain();
}

bool Connection::inTransaction() const {
  PGTransactionStatusType s = PQtransactionStatus(conn_);
  return s == PQTRANS_INTRANS || s == PQTRANS_INERROR || s == PQTRANS_ACTIVE;
}

int64_t roundTrips() { return sent.load(std::memory_order_relaxed); }

Result Connection::check(PGresult* r, std::string_view op) {
  sent.fetch_add(1, std::memory_order_relaxed);
  Result result(r);
  ExecStatusType status = r != nullptr ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  const char* state = r != nullptr ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = trimmed(r != nullptr ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
  if (message.empty()) message = trimmed(PQerrorMessage(conn_));
  bool lost = PQstatus(conn_) != CONNECTION_OK;
  if (lost || state == nullptr) broken_ = true;
  throwFor(state != nullptr ? state : "",
           "postgresql (" + redactedUrl_ + "): " + std::string(op) + " failed: " + message, lost);
}

namespace {

struct Wire {
  std::vector<Oid> types;
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

template <typename Params>
Wire wire(const Params& params) {
  Wire w;
  for (const Param& p : params) {
    w.types.push_back(p.type);
    w.values.push_back(p.null ? nullptr : p.value.data());
    w.lengths.push_back(static_cast<int>(p.value.size()));
    w.formats.push_back(1);
  }
  return w;
}

}  // namespace

Result Connection::exec(const char* sql, std::initializer_list<Param> params, std::string_view op) {
  return execWith(sql, params, op);
}

Result Connection::exec(const char* sql, const std::vector<Param>& params, std::string_view op) {
  return execWith(sql, params, op);
}

template <typename Params>
Result Connection::execWith(const char* sql, const Params& params, std::string_view op) {
  Wire w = wire(params);
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    std::string name = "s" + std::to_string(prepared_.size());
    try {
      check(PQprepare(conn_, name.c_str(), sql, static_cast<int>(w.types.size()), w.types.data()),
            op);
    } catch (const ConnectionLost& e) {
      throw UnavailableError(e.what());  // only the PREPARE was sent: the statement never ran
    }
    it = prepared_.emplace(sql, std::move(name)).first;
  }
  return check(PQexecPrepared(conn_, it->second.c_str(), static_cast<int>(w.values.size()),
                              w.values.data(), w.lengths.data(), w.formats.data(), 1),
               op);
}

Result Connection::execDynamic(const std::string& sql, const std::vector<Param>& params,
                               std::string_view op) {
  Wire w = wire(params);
  return check(PQexecParams(conn_, sql.c_str(), static_cast<int>(w.values.size()), w.types.data(),
                            w.values.data(), w.lengths.data(), w.formats.data(), 1),
               op);
}

void Connection::run(const char* sql, std::string_view op) { check(PQexec(conn_, sql), op); }

}  // namespace loom::postgres
