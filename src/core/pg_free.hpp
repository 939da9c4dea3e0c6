// Included first by every core header: the core must compile without PostgreSQL so that it
// can be unit-tested on its own, and it must come before PostgreSQL's headers in glue files
// (port.h redefines snprintf, c.h defines Min/Max).
#pragma once
#ifdef POSTGRES_H
#error "src/core is PostgreSQL-free: include core headers before postgres.h"
#endif
