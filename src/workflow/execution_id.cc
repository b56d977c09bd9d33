// Execution ids (runtime.h): the rules for one a caller chooses, and the ids the runtime makes
// (26 Crockford base-32 characters: 10 of time in ms, 16 random, so they sort by start).
#include <random>
#include <string>

#include "loom/util/error.h"
#include "loom/workflow/runtime.h"

namespace loom::workflow {

void validateExecutionId(std::string_view id) {
  auto refuse = [&](const std::string& why) {
    throw InvalidArgumentError("execution id is " + why +
                               "; use letters, digits and punctuation such as '-', '_', '.', ':' "
                               "(not first: '-'), at most " +
                               std::to_string(kMaxExecutionIdBytes) + " bytes");
  };
  if (id.empty()) refuse("empty");
  if (id.size() > kMaxExecutionIdBytes) refuse(std::to_string(id.size()) + " bytes long");
  if (id.front() == '-') refuse("'" + std::string(id) + "', which starts with '-'");
  for (unsigned char c : id) {
    if (c < 0x20 || c == 0x7f) refuse("holding the control character " + std::to_string(c));
  }
}

std::string newExecutionId(const Clock& clock) {
  static constexpr char kAlphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";  // Crockford
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id(26, '0');
  uint64_t t = static_cast<uint64_t>(clock.nowMillis());
  for (int i = 9; i >= 0; --i, t >>= 5) id[i] = kAlphabet[t & 31];
  uint64_t r1 = rng(), r2 = rng();
  for (int i = 10; i < 26; ++i) {
    uint64_t& r = i < 18 ? r1 : r2;
    id[i] = kAlphabet[r & 31];
    r >>= 5;
  }
  return id;
}

}  // namespace loom::workflow
