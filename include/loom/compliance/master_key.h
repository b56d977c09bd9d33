// Where the master key comes from (security.keys): a file or an environment variable, never
// the home's database. Boot calls loadMasterKey once, opens the SqliteKeyStore with the
// result and wipes it. Thread-safety: loadMasterKey reads the file or the environment and
// keeps nothing; call it from boot, before threads that change the environment start.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace loom::compliance {

// security.keys: exactly one of `file` and `env` is set.
struct KeysConfig {
  std::optional<std::string> file;  // a file holding 64 hex digits (a trailing newline is fine)
  std::optional<std::string> env;   // the name of an environment variable holding them
};

// Reads an environment variable; nullopt when it is unset. Tests inject their own.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
// The process environment (getenv).
EnvLookup processEnvironment();

// "the file <path>" or "the environment variable <NAME>": how errors name the source.
std::string masterKeyOrigin(const KeysConfig& config);

// The 32-byte master key. Throws ConfigError, naming security.keys and the file or the
// variable, when neither or both are set, the file does not exist or cannot be read, the
// variable is unset, or the text is not 64 hex digits (parseMasterKey). The caller wipes the
// result (sodium_memzero) once the key store holds its own copy.
std::array<uint8_t, 32> loadMasterKey(const KeysConfig& config,
                                      const EnvLookup& env = processEnvironment());

}  // namespace loom::compliance
