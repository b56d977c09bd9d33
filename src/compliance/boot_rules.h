// The boot rules of ADR 0140 D8 for encryption and erasure, as a library check the app's
// validation calls before composing anything (the lead wires the config rows and boot):
// - (a) security.crypto with execution.claimCheck is refused unless the claim-check content
//   store declares sealsContent (an EncryptingContentStore): offloaded tool outputs are
//   subject data and must be sealed under the subject's key like the log.
// - (b) compliance.erase with execution.claimCheck requires a claim-check store that can
//   delete (capability remove), so eraseSubject can reach the offloaded blobs.
// Pure function; thread-safe.
#pragma once

#include "loom/content/content_store.h"
#include "loom/middleware/config_issue.h"

namespace loom::compliance {

// Every rule the combination breaks, as ConfigIssues (option path and what to do); empty when
// it is allowed. `claimCheckStore` is the capabilities of the store execution.claimCheck
// offloads to (ignored when claimCheckOn is false).
middleware::ConfigIssues checkCryptoRules(bool securityCrypto, bool complianceErase,
                                          bool claimCheckOn,
                                          const content::ContentCapabilities& claimCheckStore);

}  // namespace loom::compliance
