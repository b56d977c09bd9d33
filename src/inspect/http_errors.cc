#include "inspect/http_errors.h"

namespace loom::inspect {

const std::vector<HttpError>& httpErrors() {
  static const std::vector<HttpError> table{
      {"invalidArgument", 400,
       "a malformed parameter or body (names the parameter), a signal the run never waited for"},
      {"config", 400, "an operation refused the configuration it would run with (names the key)"},
      {"unauthenticated", 401, "a token is required and missing or wrong"},
      {"forbidden", 403, "the Host, content type, `X-Loom-Request` or `Origin` check failed"},
      {"readOnly", 403, "a mutating route on a `--read-only` server"},
      {"sealed", 403,
       "the data is sealed and the server has no keys (start it with `--config` naming "
       "`security.keys`)"},
      {"notFound", 404, "no such execution, blob or route"},
      {"failedPrecondition", 409,
       "the operation does not apply (a run that is not retrying, an ended run)"},
      {"alreadyExists", 409, "the operation would create what exists already"},
      {"conflict", 409, "another writer changed the run meanwhile: read it again and retry"},
      {"stopped", 409, "the kill switch stopped the operation's effect"},
      {"unavailable", 503,
       "the store cannot be used for now (PostgreSQL down, a full disk, a disk I/O error)"},
      {"deadlineExceeded", 503, "the store did not answer in time"},
      {"dataLoss", 500, "a corrupt row or blob: the server refuses to guess"},
      {"stepFailed", 500, "a step the operation ran failed (its error is the message)"},
      {"internal", 500, "anything else"},
  };
  return table;
}

int httpStatusOf(std::string_view code) {
  for (const HttpError& e : httpErrors()) {
    if (e.code == code) return e.status;
  }
  return 500;
}

std::string httpErrorsMarkdown() {
  std::string out = "| code | status | when |\n|---|---|---|\n";
  for (const HttpError& e : httpErrors()) {
    out += "| `" + std::string(e.code) + "` | " + std::to_string(e.status) + " | " +
           std::string(e.when) + " |\n";
  }
  return out;
}

}  // namespace loom::inspect
