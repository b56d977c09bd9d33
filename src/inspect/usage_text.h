// A run's model usage (kernel::TokenUsage) as `loom run`, `loom state`, `loom ls` and `loom
// usage` write it.
#pragma once

#include <string>

#include "loom/kernel/usage.h"

namespace loom::inspect {

// "1234 tokens (1000 in, 234 out, 200 cached) in 3 model turns, $0.0123" ("no price" when
// its cost is 0: no price was set for its models).
std::string usageText(const kernel::TokenUsage& usage);
// "1.2k $0.012", "980", "-" (no model turns): a table cell of at most 11 characters below
// $100k.
std::string shortUsage(const kernel::TokenUsage& usage);
// "812", "4.1k", "12M": a count in a few characters (k = 1000).
std::string shortNumber(int64_t n);
// "$0.0123": 4 decimals below $1, 2 above.
std::string dollars(int64_t nanoUsd);

}  // namespace loom::inspect
