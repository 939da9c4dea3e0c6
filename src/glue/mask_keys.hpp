// The mask keys of snowflake.mask_key_file, as this process holds them: read by the postmaster
// at start and on reload (and by every backend on reload), never shown by any SQL. The
// setting's hooks load them; the mask functions take them from here.
#pragma once

#include "glue/pg.hpp"

extern "C" {
#include "utils/guc.h"
}

namespace snowflake::glue {

bool check_mask_key_file(char **newval, void **extra, GucSource source);
void assign_mask_key_file(const char *newval, void *extra);

// The keys, or an ERROR that says why there are none (55000, with the file's problem and a
// hint).
MaskKeyring &mask_keyring();
// What snowflake_status() shows: the active key's id (-1 for none), how many keys, and what
// is wrong with the file ("" when nothing).
int mask_active_key_id();
int mask_key_count();
const char *mask_key_problem();
// The key file's fingerprint (MaskKeyring::fingerprint) into out; false, out empty, without.
bool mask_keys_fingerprint(char out[17]);

}  // namespace snowflake::glue
