// This backend's stream of random bits, seeded on first use in each process.
#include "glue/random.hpp"

namespace snowflake::glue {

RandomStream random_stream;
int random_stream_pid = 0;

void seed_random_stream() {
  uint8_t seed[ChaCha20::kSeedBytes];
  if (!pg_strong_random(seed, sizeof seed))
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("could not generate random bytes to seed the ID generator")));
  random_stream.seed(seed);
  explicit_bzero(seed, sizeof seed);
  random_stream_pid = MyProcPid;
}

}  // namespace snowflake::glue
