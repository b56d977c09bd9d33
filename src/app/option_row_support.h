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

}  // namespace loom::app
