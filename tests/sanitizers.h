// Whether the test binary runs under a sanitizer (scripts/sanitize.sh), for the few tests that
// measure what a sanitizer changes: resident memory, which AddressSanitizer's quarantine of
// freed blocks keeps high, and ThreadSanitizer's shadow memory raises.
#pragma once

namespace tf::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif
#else
inline constexpr bool kUnderSanitizer = false;
#endif

}  // namespace tf::testing
