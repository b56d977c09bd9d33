// Whether this test binary runs under AddressSanitizer (the asan preset): scale tests run
// fewer rounds there, where every process is several times slower, and measure the same thing.
#pragma once

namespace loom::testing {

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#elif defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace loom::testing
