#include "compliance/boot_rules.h"

namespace loom::compliance {

middleware::ConfigIssues checkCryptoRules(bool securityCrypto, bool complianceErase,
                                          bool claimCheckOn,
                                          const content::ContentCapabilities& claimCheckStore) {
  middleware::ConfigIssues issues;
  if (!claimCheckOn) return issues;  // no offloaded blobs: nothing outside the sealed log
  if (securityCrypto && !claimCheckStore.sealsContent) {
    issues.push_back(
        {"execution.claimCheck.store",
         "security.crypto is on, and execution.claimCheck offloads tool outputs to a content "
         "store that does not seal them (sealsContent is false): those blobs would sit outside "
         "the per-subject keys that seal the log (ADR 0140 D8). Use an EncryptingContentStore "
         "for the claim-check store (storage.contentStore.sealed = true), or turn off "
         "security.crypto or execution.claimCheck"});
  }
  if (complianceErase && !claimCheckStore.remove) {
    issues.push_back(
        {"compliance.erase",
         "compliance.erase is on, and the content store execution.claimCheck offloads to "
         "cannot delete blobs (no remove capability): erasure could not reach a subject's "
         "offloaded tool outputs (ADR 0140 D8). Use a content store that can delete (the "
         "filesystem, SQLite or memory store), or turn off execution.claimCheck"});
  }
  return issues;
}

}  // namespace loom::compliance
