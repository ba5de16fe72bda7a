// A stable 64-bit hash of bytes (FNV-1a): the same bytes give the same value on every machine,
// compiler and run, so it can be written to a file and compared later (--resume keys). Not for
// security: anyone can make two inputs collide on purpose.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trainsim::util {

constexpr uint64_t kFnv1a64Offset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnv1a64Prime = 0x100000001b3ull;

// FNV-1a 64 of `bytes`, continuing from `hash` (so several pieces hash as their concatenation).
constexpr uint64_t fnv1a64(std::string_view bytes, uint64_t hash = kFnv1a64Offset) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= kFnv1a64Prime;
  }
  return hash;
}

// The 16 lower-case hex digits of `value`.
std::string hex64(uint64_t value);

}  // namespace trainsim::util
