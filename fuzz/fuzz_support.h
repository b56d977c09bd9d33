// Shared by the libFuzzer targets (fuzz/README.md): the input as text, and the one rule every
// target checks — a parser of untrusted bytes may refuse them only with a typed loom::Error;
// any other exception (an unchecked boost::json accessor, std::out_of_range, ...) or a crash
// is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "loom/util/error.h"

namespace loom::fuzz {

inline std::string_view textOf(const uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `parse`; a loom::Error is a refusal, anything else escapes to libFuzzer (a finding).
template <typename Parse>
void refusesOnlyWithTypedErrors(Parse&& parse) {
  try {
    parse();
  } catch (const Error&) {
  }
}

}  // namespace loom::fuzz
