// Built-in pure digest builders for loom.toml (ADR 0140 D3): in C++ any pure function of the
// result is a digest; a TOML file declares one from these parts, combined into one object:
//   pick    = ["/total", "/hits/0/title"]  -> {"/total": 42, "/hits/0/title": "..."}
//   length  = "/hits"                      -> {"length": 10}  (the array's element count)
//   preview = 120                          -> {"preview": <first 120 characters>, "truncated"?}
// A pointer that does not resolve gives null (pick) or is left out (length). A declared
// digest is prompt text: it must stay free of untrusted content (the caller's to keep).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loom/middleware/claim_check/claim_check_options.h"
#include "loom/middleware/config_issue.h"

namespace loom::middleware {

struct DigestSpec {
  std::vector<std::string> pick;  // JSON pointers (RFC 6901)
  std::optional<std::string> length;
  std::optional<int64_t> preview;
};

// Problems of a spec, naming `path` (e.g. "execution.claimCheck.digests.search").
ConfigIssues validateDigestSpec(const DigestSpec& spec, const std::string& path);
DigestFn buildDigest(DigestSpec spec);
// "{pick = [...], length = ..., preview = n}", for describing a config.
std::string describeDigestSpec(const DigestSpec& spec);

}  // namespace loom::middleware
