// TOML text to a JSON value (tables → objects, arrays → arrays, scalars as themselves, dates
// as RFC 3339 strings). Throws InvalidArgumentError naming the file and the line.
#pragma once

#include <string>

#include "loom/json/json.h"

namespace loom::providers {

json::value tomlToJson(const std::string& text, const std::string& origin);

}  // namespace loom::providers
