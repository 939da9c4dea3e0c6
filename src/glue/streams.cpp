// The generators' slow paths: the sources of a backend without the shared state, and the end
// of a kind's range.
#include "glue/streams.hpp"

namespace snowflake::glue {

Sources128 backend_sources128() {
  static ClockState clock;
  static Streams128 streams;
  static bool ready = false;
  if (!ready) {
    clock.init();
    streams.init();
    ready = true;
    warn_not_preloaded(false);
  }
  return Sources128{clock, streams, nullptr};
}

void raise_exhausted(const char *kind) {
  ereport(ERROR,
          (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
           errmsg("%s values are exhausted: the clock is past the range of the layout", kind)));
  pg_unreachable();
}

}  // namespace snowflake::glue
