// ULID text: 26 characters of Crockford's base32 (0-9, A-Z without I, L, O and U), the
// first of which carries only 3 bits, so it is at most '7'. Output is upper case; input is
// case-insensitive.
#pragma once
#include "core/pg_free.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake {

constexpr size_t kUlidTextLen = 26;

enum class UlidParse : uint8_t { kOk, kBadLength, kBadCharacter, kOverflow };

void ulid_encode(const uint8_t in[16], char out[kUlidTextLen]) noexcept;
// The same in lower case (TypeID's and the mask tokens' form).
void ulid_encode_lower(const uint8_t in[16], char out[kUlidTextLen]) noexcept;
UlidParse ulid_decode(const char *text, size_t len, uint8_t out[16]) noexcept;

}  // namespace snowflake
