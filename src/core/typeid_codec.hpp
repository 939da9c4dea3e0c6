// TypeID text (github.com/jetify-com/typeid, specification 0.3.0): a type prefix, an
// underscore and a UUID as 26 characters of base32, as in user_01h455vb4pex5vsknk084sn02q.
// The prefix is at most 63 of a-z and '_', neither first nor last; an empty prefix leaves the
// underscore out too. The suffix is the UUID's 128 bits after two zero bits, in 5-bit groups,
// in Crockford's alphabet in lower case (0-9, a-z without i, l, o and u), so its first
// character is at most '7'. The specification is strict and so is this: lower case only, in
// the prefix and in the suffix, and no hyphens.
#pragma once
#include "core/pg_free.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake {

constexpr size_t kTypeidSuffixLen = 26;
constexpr size_t kTypeidMaxPrefixLen = 63;
constexpr size_t kTypeidMaxLen = kTypeidMaxPrefixLen + 1 + kTypeidSuffixLen;

// The rule a text breaks, the first one met reading left to right: the prefix's characters,
// its ends, its length, then the suffix's length, characters and first character.
enum class TypeidProblem : uint8_t {
  kOk,
  kPrefixUppercase,     // a letter A-Z in the prefix
  kPrefixBadCharacter,  // anything else but a-z and '_'
  kPrefixStartsWithUnderscore,
  kPrefixEndsWithUnderscore,
  kPrefixTooLong,           // over 63 characters
  kSeparatorWithoutPrefix,  // an underscore before an empty prefix
  kSuffixBadLength,         // not 26 characters
  kSuffixUppercase,         // a letter whose lower case is in the alphabet
  kSuffixBadCharacter,      // anything else outside the alphabet
  kSuffixOverflow,          // first character above '7': more than 128 bits
};

// Whether a prefix may stand in a TypeID ("" may).
TypeidProblem typeid_check_prefix(const char *prefix, size_t len) noexcept;

// prefix + '_' + suffix, or the suffix alone for an empty prefix, into out (not terminated);
// *out_len is its length. Nothing is written unless the prefix is valid.
TypeidProblem typeid_encode(const char *prefix, size_t prefix_len, const uint8_t uuid[16],
                            char out[kTypeidMaxLen], size_t *out_len) noexcept;

// The UUID of a TypeID, and its prefix's length: the prefix is text[0, *prefix_len).
TypeidProblem typeid_decode(const char *text, size_t len, size_t *prefix_len,
                            uint8_t uuid[16]) noexcept;

}  // namespace snowflake
