// The inspector API's error codes and their HTTP statuses: the one table the server answers by
// and docs/spec/http-api.md ("Errors") is generated from (a test compares them).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace loom::inspect {

struct HttpError {
  std::string_view code;  // every loom::ErrorCode's name, and the server's own checks' codes
  int status;
  std::string_view when;  // the spec's "when" column
};

const std::vector<HttpError>& httpErrors();
// The status of `code`; 500 for a code not in the table.
int httpStatusOf(std::string_view code);
// The spec's table: a header row, then one row per code.
std::string httpErrorsMarkdown();

}  // namespace loom::inspect
