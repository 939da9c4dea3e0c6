#include "glue/text_input.hpp"

extern "C" {
#include "mb/pg_wchar.h"
}

namespace snowflake::glue {

size_t chars(const char *s, size_t len) {
  return static_cast<size_t>(pg_mbstrlen_with_len(s, static_cast<int>(len)));
}

const char *shown(const char *s, size_t len, size_t pos, char buf[32]) {
  const unsigned char u = static_cast<unsigned char>(s[pos]);
  if (u > 0x20 && u < 0x7f)
    snprintf(buf, 32, "\"%c\"", s[pos]);
  else if (u < 0x80 || pg_database_encoding_max_length() == 1)
    snprintf(buf, 32, "0x%02x", u);
  else {
    const int before = pg_mbstrlen_with_len(s, static_cast<int>(pos));
    const int end = pg_mbcharcliplen(s, static_cast<int>(len), before + 1);
    const int n = end - static_cast<int>(pos) < MAX_MULTIBYTE_CHAR_LEN ? end - static_cast<int>(pos)
                                                                       : MAX_MULTIBYTE_CHAR_LEN;
    if (GetDatabaseEncoding() == PG_UTF8)
      snprintf(
          buf, 32, "\"%.*s\" (U+%04X)", n, s + pos,
          static_cast<unsigned>(utf8_to_unicode(reinterpret_cast<const unsigned char *>(s + pos))));
    else
      snprintf(buf, 32, "\"%.*s\"", n, s + pos);
  }
  return buf;
}

}  // namespace snowflake::glue
