// The envelope, taint and inert-data readers (content/claim_check_envelope.h, effects/taint.h)
// over any JSON a tool or a model could return: they never crash, and a value admitted from
// outside never reads as an envelope Loom wrote.
#include <cstdlib>

#include "content/claim_check_envelope.h"
#include "fuzz_support.h"
#include "loom/effects/taint.h"
#include "loom/json/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom;
  fuzz::refusesOnlyWithTypedErrors([&] {
    json::value v = json::parse(fuzz::textOf(data, size), "fuzz");
    content::looksLikeEnvelope(v);
    content::parseEnvelope(v);
    effects::taintOrigins(v);
    effects::containsTaint(v);
    effects::taintOrigin(v);
    content::admitFromOutside(v, "fuzz");
    if (content::parseEnvelope(v)) std::abort();  // an outside value stayed a live envelope
  });
  return 0;
}
