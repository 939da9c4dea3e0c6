// Whether another database of the cluster has the extension (other_databases.cpp).
#pragma once

#include "glue/pg.hpp"

namespace snowflake::glue {

struct OtherDatabases {
  enum Answer {
    kNone,        // no other database has the extension
    kFound,       // database has it
    kUnanswered,  // database could not be asked (why says why)
  } answer;
  char database[NAMEDATALEN];
  char why[96];
};

// Asks every database but this one, one background worker each, in turn; stops at the first
// that has the extension or cannot answer. Interruptible; at most 60 s a database.
OtherDatabases extension_in_other_databases();

}  // namespace snowflake::glue
