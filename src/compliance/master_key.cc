#include "loom/compliance/master_key.h"

#include <sodium.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "loom/compliance/key_store.h"
#include "loom/util/error.h"

namespace loom::compliance {
namespace {

// Holds secret text and wipes it when done.
struct SecretText {
  std::string text;
  ~SecretText() {
    if (!text.empty()) sodium_memzero(text.data(), text.size());
  }
};

}  // namespace

EnvLookup processEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

std::string masterKeyOrigin(const KeysConfig& config) {
  if (config.file) return "the file " + *config.file + " (security.keys.file)";
  if (config.env) return "the environment variable " + *config.env + " (security.keys.env)";
  return "security.keys";
}

std::array<uint8_t, 32> loadMasterKey(const KeysConfig& config, const EnvLookup& env) {
  if (config.file.has_value() == config.env.has_value()) {
    throw ConfigError(std::string("security.keys must name exactly one source of the master ") +
                      "key, a file (security.keys.file) or an environment variable " +
                      "(security.keys.env)" + (config.file ? ", not both" : "; none is set") +
                      ". Generate a key with `loom keys new-master` and keep it outside the home");
  }
  const std::string origin = masterKeyOrigin(config);
  SecretText secret;
  if (config.file) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*config.file, ec)) {
      throw ConfigError("the master key file " + *config.file +
                        " (security.keys.file) does not exist or is not a file; create it with "
                        "`loom keys new-master > " +
                        *config.file + "` (mode 600)");
    }
    struct stat st {};
    if (::stat(config.file->c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
      throw ConfigError("the master key file " + *config.file +
                        " (security.keys.file) is readable by group or others (mode " + mode +
                        "); restrict it with `chmod 600 " + *config.file + "`");
    }
    std::ifstream in(*config.file, std::ios::binary);
    if (!in) {
      throw ConfigError("the master key file " + *config.file +
                        " (security.keys.file) cannot be read; check its permissions");
    }
    secret.text.assign(std::istreambuf_iterator<char>(in), {});
  } else {
    std::optional<std::string> value = env(*config.env);
    if (!value) {
      throw ConfigError("the environment variable " + *config.env +
                        " (security.keys.env) is not set; export the 64 hex digits of the "
                        "master key in it (`loom keys new-master` prints a fresh one)");
    }
    secret.text = std::move(*value);
  }
  return parseMasterKey(secret.text, origin);
}

}  // namespace loom::compliance
