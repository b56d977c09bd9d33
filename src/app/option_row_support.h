// Appending a row to the option table, for the files that contribute rows (options.cc and
// the *_option_rows.cc files).
#pragma once

#include <string>
#include <vector>

#include "app/options.h"

namespace loom::app {

inline OptionRow& addOptionRow(std::vector<OptionRow>& rows, std::string path, OptionType type,
                               std::string description, std::string defaultText = "") {
  OptionRow& r = rows.emplace_back();
  r.path = std::move(path);
  r.type = type;
  r.description = std::move(description);
  r.defaultText = std::move(defaultText);
  return r;
}

// A number option's value (an integer or a float) as a double.
inline double numberOf(const OptionValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

}  // namespace loom::app
