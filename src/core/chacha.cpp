#include "chacha.hpp"

#include <cstring>

namespace snowflake {

namespace {

inline uint32_t rotl(uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

inline void quarter(uint32_t *x, int a, int b, int c, int d) {
  x[a] += x[b]; x[d] = rotl(x[d] ^ x[a], 16);
  x[c] += x[d]; x[b] = rotl(x[b] ^ x[c], 12);
  x[a] += x[b]; x[d] = rotl(x[d] ^ x[a], 8);
  x[c] += x[d]; x[b] = rotl(x[b] ^ x[c], 7);
}

inline uint32_t load_le(const uint8_t *p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

inline void store_le(uint8_t *p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

}  // namespace

void ChaCha20::init(const uint8_t *key, const uint8_t *nonce, uint32_t counter) noexcept {
  state_[0] = 0x61707865;  // "expand 32-byte k"
  state_[1] = 0x3320646e;
  state_[2] = 0x79622d32;
  state_[3] = 0x6b206574;
  for (int i = 0; i < 8; ++i) state_[4 + i] = load_le(key + 4 * i);
  state_[12] = counter;
  for (int i = 0; i < 3; ++i) state_[13 + i] = load_le(nonce + 4 * i);
}

void ChaCha20::block(uint8_t out[kBlockBytes]) noexcept {
  uint32_t x[16];
  std::memcpy(x, state_, sizeof x);
  for (int round = 0; round < 10; ++round) {
    quarter(x, 0, 4, 8, 12);
    quarter(x, 1, 5, 9, 13);
    quarter(x, 2, 6, 10, 14);
    quarter(x, 3, 7, 11, 15);
    quarter(x, 0, 5, 10, 15);
    quarter(x, 1, 6, 11, 12);
    quarter(x, 2, 7, 8, 13);
    quarter(x, 3, 4, 9, 14);
  }
  for (int i = 0; i < 16; ++i) store_le(out + 4 * i, x[i] + state_[i]);
  // 2^32 blocks (256 GiB) per nonce: past that, move into the nonce so that no block repeats.
  if (++state_[12] == 0) ++state_[13];
}

void RandomStream::seed(const uint8_t seed[ChaCha20::kSeedBytes]) noexcept {
  cipher_.init(seed, seed + 32, 0);
  pos_ = kBufferBytes;
  seeded_ = true;
}

void RandomStream::refill() noexcept {
  for (size_t off = 0; off < kBufferBytes; off += ChaCha20::kBlockBytes)
    cipher_.block(buffer_ + off);
  pos_ = 0;
}

void RandomStream::fill(void *out, size_t n) noexcept {
  uint8_t *dst = static_cast<uint8_t *>(out);
  while (n > 0) {
    if (pos_ == kBufferBytes) refill();
    const size_t take = n < kBufferBytes - pos_ ? n : kBufferBytes - pos_;
    std::memcpy(dst, buffer_ + pos_, take);
    // Bytes handed out are erased from the buffer, so a later reader of this process's
    // memory cannot learn values already issued.
    std::memset(buffer_ + pos_, 0, take);
    pos_ += take;
    dst += take;
    n -= take;
  }
}

}  // namespace snowflake
