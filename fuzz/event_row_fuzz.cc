// The event row parser (kernel/event.h): a stored row is bytes anyone with the file could have
// written. Accepted rows must round-trip: their text parses again to the same event.
#include <cstdlib>

#include "fuzz_support.h"
#include "loom/kernel/event.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom;
  std::string_view text = fuzz::textOf(data, size);
  fuzz::refusesOnlyWithTypedErrors([&] {
    kernel::Event event = kernel::eventFromText("e", 1, text);
    std::string again = kernel::toText(event);
    if (kernel::toText(kernel::eventFromText("e", 1, again)) != again) std::abort();
  });
  fuzz::refusesOnlyWithTypedErrors([&] { kernel::controlEventFromText(1, text); });
  return 0;
}
