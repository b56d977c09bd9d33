// The D8 boot rules through defineConfig/boot: security.crypto with execution.claimCheck needs
// a sealing store; compliance.erase and security.crypto need security.keys; a refused config
// creates nothing; a good one seals the log (no plaintext in loom.db).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "loom/app/app.h"
#include "loom/app/config_file.h"
#include "loom/compliance/key_store.h"
#include "loom/util/error.h"
#include "support/temp_dir.h"

namespace loom::app {
namespace {

std::string issuesText(const Config& c) {
  try {
    defineConfig(c);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

Config cryptoWithClaimCheck(const std::filesystem::path& home) {
  Config c;
  c.storage.home = home.string();
  c.security.crypto = true;
  c.security.keys = compliance::KeysConfig{std::nullopt, "LOOM_TEST_MASTER_KEY"};
  middleware::ClaimCheckConfig cc;
  cc.toolIds = std::vector<std::string>{"fetch"};
  c.execution.claimCheck = cc;
  return c;
}

TEST(ComplianceBoot, CryptoWithClaimCheckNeedsASealingStoreAndComposesNothing) {
  loom::testing::TempDir dir("d8");
  auto home = dir.path() / "home";
  Config c = cryptoWithClaimCheck(home);
  std::string refused = issuesText(c);
  EXPECT_NE(refused.find("execution.claimCheck.store"), std::string::npos) << refused;
  EXPECT_NE(refused.find("security.crypto"), std::string::npos) << refused;
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  EXPECT_THROW(boot(std::make_shared<const Config>(c), workflows, tasks), ConfigError);
  EXPECT_FALSE(std::filesystem::exists(home)) << "nothing composed";
  c.storage.contentStore.sealed = true;
  EXPECT_EQ(issuesText(c), "");
}

// The same D8 rule for a claim-check on the app's store in execution.effectMiddleware.
TEST(ComplianceBoot, CryptoWithAClaimCheckOnTheAppStoreNeedsItSealed) {
  Config c;
  c.security.crypto = true;
  c.security.keys = compliance::KeysConfig{std::nullopt, "LOOM_TEST_MASTER_KEY"};
  middleware::ClaimCheckOptions options;
  options.name = "offload";
  c.execution.effectMiddleware = {std::make_shared<middleware::AppStoreClaimCheck>(options)};
  std::string refused = issuesText(c);
  EXPECT_NE(refused.find("execution.effectMiddleware[0]"), std::string::npos) << refused;
  EXPECT_NE(refused.find("storage.contentStore.sealed = true"), std::string::npos) << refused;
  c.storage.contentStore.sealed = true;
  EXPECT_EQ(issuesText(c), "");
}

TEST(ComplianceBoot, EraseAndCryptoNeedKeysAndAMasterKeyThatOpensTheStore) {
  Config c;
  c.compliance.erase = true;
  EXPECT_NE(issuesText(c).find("security.keys"), std::string::npos);
  c.security.keys = compliance::KeysConfig{"a-file", "AND_AN_ENV"};
  EXPECT_NE(issuesText(c).find("exactly one of file and env"), std::string::npos);
  EXPECT_NE(parseConfigToml("[compliance.erase]\n[security.keys]\nenv = \"K\"\n", "ok.toml"),
            nullptr);
}

TEST(ComplianceBoot, ASealedHomeHoldsNoPlaintextOfASubjectsRun) {
  loom::testing::TempDir dir("seal");
  auto home = dir.path() / "home";
  ::setenv("LOOM_TEST_MASTER_KEY", compliance::newMasterKeyHex().c_str(), 1);
  Config c;
  c.storage.home = home.string();
  c.compliance.erase = true;
  c.security.keys = compliance::KeysConfig{std::nullopt, "LOOM_TEST_MASTER_KEY"};
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  workflows.add("secret", "", [](workflow::WorkflowContext& ctx) {
    return ctx.step("s", [] { return json::value("plaintext-marker-4711"); });
  });
  {
    auto app = boot(defineConfig(c), workflows, tasks);
    auto r = app->runtime().start("secret", json::value("input-marker-4711"),
                                  {.id = "x", .subject = "alice"});
    EXPECT_EQ(r.output, json::value("plaintext-marker-4711"));
    EXPECT_EQ(app->runtime().resume("x").output, json::value("plaintext-marker-4711"));
  }
  for (const auto& f : std::filesystem::recursive_directory_iterator(home)) {
    if (!f.is_regular_file()) continue;
    std::ifstream in(f.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bytes.find("marker-4711"), std::string::npos) << f.path();
  }
}

}  // namespace
}  // namespace loom::app
