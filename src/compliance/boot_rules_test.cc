// ADR 0140 D8's boot rules as a library check: each clause as its own test.
#include "compliance/boot_rules.h"

#include <gtest/gtest.h>

#include "compliance/encrypting_content_store.h"
#include "loom/compliance/memory_key_store.h"
#include "loom/content/memory_content_store.h"

namespace loom::compliance {
namespace {

content::ContentCapabilities plainStore() {
  content::MemoryContentStore store(systemClock());
  return store.capabilities();
}

content::ContentCapabilities sealingStore() {
  content::MemoryContentStore inner(systemClock());
  MemoryKeyStore keys;
  return EncryptingContentStore(inner, keys).capabilities();
}

TEST(BootRules, CryptoWithClaimCheckOverAPlaintextStoreIsRefusedNamingBothOptions) {
  middleware::ConfigIssues issues = checkCryptoRules(true, false, true, plainStore());
  ASSERT_EQ(1u, issues.size());
  EXPECT_EQ("execution.claimCheck.store", issues[0].path);
  for (std::string_view needle : {"security.crypto", "execution.claimCheck",
                                  "EncryptingContentStore", "storage.contentStore.sealed = true"}) {
    EXPECT_NE(std::string::npos, issues[0].message.find(needle)) << needle;
  }
}

TEST(BootRules, CryptoWithClaimCheckOverASealingStoreIsAllowed) {
  EXPECT_TRUE(checkCryptoRules(true, false, true, sealingStore()).empty());
  EXPECT_TRUE(checkCryptoRules(true, true, true, sealingStore()).empty());
}

TEST(BootRules, CryptoWithoutClaimCheckNeedsNoStore) {
  EXPECT_TRUE(checkCryptoRules(true, true, false, content::ContentCapabilities{}).empty());
}

TEST(BootRules, EraseRequiresAClaimCheckStoreThatCanDelete) {
  content::ContentCapabilities noDelete = plainStore();
  noDelete.remove = false;
  middleware::ConfigIssues issues = checkCryptoRules(false, true, true, noDelete);
  ASSERT_EQ(1u, issues.size());
  EXPECT_EQ("compliance.erase", issues[0].path);
  EXPECT_NE(std::string::npos, issues[0].message.find("execution.claimCheck"));
  EXPECT_TRUE(checkCryptoRules(false, true, true, plainStore()).empty());
}

TEST(BootRules, BothRulesAreReportedAtOnce) {
  EXPECT_EQ(2u, checkCryptoRules(true, true, true, content::ContentCapabilities{}).size());
  EXPECT_TRUE(checkCryptoRules(false, false, true, content::ContentCapabilities{}).empty());
}

}  // namespace
}  // namespace loom::compliance
