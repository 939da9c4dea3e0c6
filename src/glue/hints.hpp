// Hints added to PostgreSQL's own errors that users of the extension meet (hints.cpp).
#pragma once

namespace snowflake::glue {

// Installs the emit_log_hook that adds them; once, from _PG_init.
void install_hints();

}  // namespace snowflake::glue
