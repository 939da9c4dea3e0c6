// Included first by every core header: the core must compile without PostgreSQL so that it
// can be unit-tested on its own, and it must come before PostgreSQL's headers in glue files
// (port.h redefines snprintf, c.h defines Min/Max). No include guard: the check runs at each
// core header's first reading, so any core header read after postgres.h stops the build.
#ifdef POSTGRES_H
#error "src/core is PostgreSQL-free: include core headers before postgres.h"
#endif
