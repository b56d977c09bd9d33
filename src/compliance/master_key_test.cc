// The master key: parsing, generation, and loadMasterKey from a file or an environment
// variable, with ConfigErrors that name the source and never echo the key.
#include "loom/compliance/master_key.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "loom/compliance/key_store.h"
#include "loom/util/error.h"
#include "sealing_test_util.h"

namespace loom::compliance {
namespace {

using namespace sealing_test;

const std::string kHex = "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F";

std::string configErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return "";
}

EnvLookup fakeEnv(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(MasterKey, ParsesSixtyFourHexDigitsIgnoringSurroundingWhitespace) {
  auto key = parseMasterKey("  " + kHex + "\n", "test");
  for (std::size_t i = 0; i < key.size(); ++i) EXPECT_EQ(i, key[i]);
}

TEST(MasterKey, MalformedKeysAreConfigErrorsNamingTheOriginButNotTheText) {
  for (std::string bad : {std::string(), std::string(63, 'a'), std::string(65, 'a'),
                          std::string(62, 'a') + "zz", std::string("hunter2")}) {
    std::string m = configErrorOf([&] { parseMasterKey(bad, "the file /k"); });
    EXPECT_NE(std::string::npos, m.find("the file /k")) << m;
    EXPECT_NE(std::string::npos, m.find("loom keys new-master")) << m;
    if (!bad.empty()) {
      EXPECT_EQ(std::string::npos, m.find(bad)) << m;
    }
  }
}

TEST(MasterKey, NewMasterKeysAreFreshAndParse) {
  std::string a = newMasterKeyHex();
  std::string b = newMasterKeyHex();
  EXPECT_EQ(64u, a.size());
  EXPECT_NE(a, b);
  EXPECT_NO_THROW(parseMasterKey(a, "new"));
}

TEST(MasterKey, LoadsFromAFile) {
  ScratchHome dir;
  std::string path = (dir.path() / "master.key").string();
  std::ofstream(path) << kHex << "\n";
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto key = loadMasterKey(KeysConfig{path, std::nullopt});
  EXPECT_EQ(0x1f, key[31]);
}

TEST(MasterKey, AKeyFileReadableByGroupOrOthersIsRefusedAsSshDoes) {
  ScratchHome dir;
  std::string path = (dir.path() / "master.key").string();
  std::ofstream(path) << kHex << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::owner_write |
                                         std::filesystem::perms::group_read);
  try {
    loadMasterKey(KeysConfig{path, std::nullopt});
    FAIL() << "a group-readable key file was used";
  } catch (const ConfigError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("mode 640"), std::string::npos) << m;
    EXPECT_NE(m.find("chmod 600 " + path), std::string::npos) << m;
    EXPECT_EQ(m.find(kHex), std::string::npos) << "never the key itself";
  }
}

TEST(MasterKey, LoadsFromAnEnvironmentVariable) {
  auto key = loadMasterKey(KeysConfig{std::nullopt, "LOOM_MASTER_KEY"},
                           fakeEnv({{"LOOM_MASTER_KEY", kHex}}));
  EXPECT_EQ(0x10, key[16]);
}

TEST(MasterKey, MissingSourcesAreConfigErrorsNamingWhich) {
  std::string m = configErrorOf([] {
    loadMasterKey(KeysConfig{"/no/such/dir/master.key", std::nullopt});
  });
  EXPECT_NE(std::string::npos, m.find("/no/such/dir/master.key")) << m;
  EXPECT_NE(std::string::npos, m.find("security.keys.file")) << m;
  m = configErrorOf([] {
    loadMasterKey(KeysConfig{std::nullopt, "LOOM_MASTER_KEY"}, fakeEnv({}));
  });
  EXPECT_NE(std::string::npos, m.find("LOOM_MASTER_KEY")) << m;
  EXPECT_NE(std::string::npos, m.find("not set")) << m;
  m = configErrorOf([] {
    loadMasterKey(KeysConfig{std::nullopt, "K"}, fakeEnv({{"K", "not a key"}}));
  });
  EXPECT_NE(std::string::npos, m.find("environment variable K")) << m;
  EXPECT_NE(std::string::npos, m.find("malformed")) << m;
  m = configErrorOf([] { loadMasterKey(KeysConfig{}); });
  EXPECT_NE(std::string::npos, m.find("none is set")) << m;
  m = configErrorOf([] { loadMasterKey(KeysConfig{"/k", "K"}); });
  EXPECT_NE(std::string::npos, m.find("not both")) << m;
}

}  // namespace
}  // namespace loom::compliance
