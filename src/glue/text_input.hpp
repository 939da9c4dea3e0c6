// What the text input of the ID types shares for its messages: lengths and positions count
// characters in the server's encoding, not bytes, so that a message counts and places what
// was typed (text_input.cpp).
#pragma once

#include "glue/pg.hpp"

namespace snowflake::glue {

// The number of characters in len bytes of s.
size_t chars(const char *s, size_t len);

// The character at byte pos of s (a character's first byte) for a message: printable ASCII as
// itself, another byte of one-byte encodings as its value, a character of more than one byte
// as itself, with its code point in a UTF-8 database.
const char *shown(const char *s, size_t len, size_t pos, char buf[32]);

}  // namespace snowflake::glue
