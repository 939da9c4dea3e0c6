// Random bits from this backend's ChaCha20 stream (random.cpp), seeded from
// pg_strong_random in this process on first use (so never shared with a parent or sibling
// process).
#pragma once

#include "glue/pg.hpp"

extern "C" {
#include "miscadmin.h"
}

namespace snowflake::glue {

extern RandomStream random_stream;
extern int random_stream_pid;
void seed_random_stream();
inline uint64_t random_u64() {
  if (unlikely(random_stream_pid != MyProcPid)) seed_random_stream();
  return random_stream.next_u64();
}
template <size_t N>
inline void random_bytes(uint8_t out[N]) {
  if (unlikely(random_stream_pid != MyProcPid)) seed_random_stream();
  random_stream.next_bytes<N>(out);
}

}  // namespace snowflake::glue
