// The reverse of a 32-character alphabet, for the base32 codecs (ULID, TypeID, sno, xid): each
// character's value, -1 for one outside the alphabet; with fold_case, the lower case of each
// upper-case letter of the alphabet too.
#pragma once
#include "core/pg_free.hpp"

#include <cstdint>

namespace snowflake {

struct Base32Table {
  int8_t v[256];
  constexpr explicit Base32Table(const char *alphabet, bool fold_case = false) : v() {
    for (int i = 0; i < 256; ++i) v[i] = -1;
    for (int i = 0; i < 32; ++i) {
      const char c = alphabet[i];
      v[static_cast<unsigned char>(c)] = static_cast<int8_t>(i);
      if (fold_case && c >= 'A' && c <= 'Z')
        v[static_cast<unsigned char>(c - 'A' + 'a')] = static_cast<int8_t>(i);
    }
  }
};

}  // namespace snowflake
