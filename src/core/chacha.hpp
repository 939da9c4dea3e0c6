// ChaCha20 (RFC 8439) as a buffered random-number generator: the random parts of UUIDv7 and
// ULID values. Seeded from the operating system's CSPRNG by the caller, per process.
#pragma once
#include "pg_free.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace snowflake {

class ChaCha20 {
 public:
  static constexpr size_t kSeedBytes = 32 + 12;  // key and nonce
  static constexpr size_t kBlockBytes = 64;

  // key: 32 bytes, nonce: 12 bytes, counter: the first block's counter.
  void init(const uint8_t *key, const uint8_t *nonce, uint32_t counter) noexcept;
  // One keystream block, and the counter moves on.
  void block(uint8_t out[kBlockBytes]) noexcept;
  // n consecutive blocks.
  void blocks(uint8_t *out, size_t n) noexcept;

 private:
  uint32_t state_[16];
};

// Hands out keystream bytes from a buffer of several blocks, 8 at a time, erasing them from
// the buffer; seeded() is false until seed().
class RandomStream {
 public:
  void seed(const uint8_t seed[ChaCha20::kSeedBytes]) noexcept;
  bool seeded() const noexcept { return seeded_; }

  // The next 8 bytes (the path every ID takes: inline, fixed-size copies).
  uint64_t next_u64() noexcept {
    if (pos_ > kBufferBytes - sizeof(uint64_t)) refill();
    uint64_t v;
    std::memcpy(&v, buffer_ + pos_, sizeof v);
    std::memset(buffer_ + pos_, 0, sizeof v);
    pos_ += sizeof v;
    return v;
  }

 private:
  static constexpr size_t kBufferBytes = 8 * ChaCha20::kBlockBytes;
  void refill() noexcept;

  ChaCha20 cipher_;
  uint8_t buffer_[kBufferBytes];
  size_t pos_ = kBufferBytes;
  bool seeded_ = false;
};

}  // namespace snowflake
