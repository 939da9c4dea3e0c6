// The snowflake.* settings (settings.cpp defines them, _PG_init registers them).
#pragma once

#include "glue/pg.hpp"

namespace snowflake::glue {

// Registers every snowflake.* setting and reserves the prefix (in _PG_init).
void define_settings();

extern int shard_id;     // snowflake.shard_id
extern int shard_count;  // snowflake.shard_count: snowflake() issues on shard_id ... + count - 1
extern int on_shard_collision;      // snowflake.on_shard_collision: WARNING or ERROR
extern int max_lead_ms;             // snowflake.max_lead
extern int block_max_lead_ms;       // snowflake.block_max_lead
extern int max_clock_offset_ms;     // snowflake.max_clock_offset
extern int64_t epoch_ms;            // snowflake.epoch, parsed
extern int reservation_window_ms;   // snowflake.reservation_window
extern int reservation_timeout_ms;  // snowflake.reservation_timeout

// Lease mode (snowflake.shard_source = etcd): the shards come from a lease in etcd.
extern bool lease_mode;                           // snowflake.shard_source is etcd (fixed at start)
extern char *etcd_endpoints;                      // snowflake.etcd_endpoints
extern char *etcd_prefix;                         // snowflake.etcd_prefix
extern uint32_t shard_pool_low, shard_pool_high;  // snowflake.shard_pool, parsed
extern int lease_ttl_s;                           // snowflake.lease_ttl
extern int lease_renew_ms;                        // snowflake.lease_renew
extern int lease_fail_after_ms;                   // snowflake.lease_fail_after
extern int lease_restore_margin_ms;               // snowflake.lease_restore_margin
extern char *mask_key_file;                       // snowflake.mask_key_file
extern char *etcd_cafile, *etcd_certfile, *etcd_keyfile, *etcd_user, *etcd_password_file;
extern bool etcd_allow_plaintext_password;  // snowflake.etcd_allow_plaintext_password
// Why lease mode cannot work with these settings (set at start, "" when it can): the server
// runs, and snowflake() refuses with this.
extern char lease_setting_problem[320];
// Lease mode's settings, as the lease machine takes them.
LeaseSettings configured_lease();

// Epochs (the setting's and the epoch arguments') from 1970 to 2100: wide enough for every
// real scheme (Instagram's is 2011), narrow enough that no conversion to timestamptz can
// overflow.
constexpr int64_t kMaxEpochMs = 4102444800000;

// A snowflake.shard_id or snowflake.epoch in the configuration file that is not valid: the
// server would otherwise run on the default (shard 0, epoch 2020) with a WARNING in its log,
// so snowflake() refuses instead (check_snowflake_settings).
extern const char *bad_setting_name;
extern char bad_setting_value[64];
[[noreturn]] void raise_bad_setting();
inline bool bad_epoch_setting() {
  return bad_setting_name != nullptr && std::strcmp(bad_setting_name, "snowflake.epoch") == 0;
}
void report_default_shard();

// The GucSource of snowflake.shard_id's value in force (PGC_S_DEFAULT: set nowhere).
int shard_id_source();

// The snowflake.* names in the configuration files as the server last loaded them that are no
// setting of the extension (a misspelling: PostgreSQL only logs it and drops it): names, each
// with the nearest setting's name; places, each with its file and line too; "; " between them;
// both nullptr when there is none.
struct UnknownSettings {
  const char *names;
  const char *places;
};
UnknownSettings unknown_settings();
// On the default shard (snowflake.shard_id set nowhere), raises 42704 naming them, if there
// are any.
void refuse_unknown_on_default_shard();

// Before issuing an ID that carries the session's shard: refused for a bad setting, and on the
// default shard (set nowhere) while the configuration names a snowflake.* setting that does not
// exist (a misspelled snowflake.shard_id or snowflake.shard_source would otherwise leave two
// servers on shard 0); the default shard said once per server. One test of a flag on the hot
// path; a session whose shard becomes the default again checks again.
extern bool snowflake_settings_checked;
inline void check_snowflake_settings() {
  if (unlikely(!snowflake_settings_checked)) {
    if (bad_setting_name != nullptr) raise_bad_setting();
    refuse_unknown_on_default_shard();
    report_default_shard();
    snowflake_settings_checked = true;
  }
}

}  // namespace snowflake::glue
