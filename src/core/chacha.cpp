#include "chacha.hpp"

#include <cstring>

namespace snowflake {

namespace {

// Four blocks side by side in vector registers (GCC/Clang vector extensions: SSE2 on
// x86-64, NEON on ARM64, plain code elsewhere).
typedef uint32_t v4u32 __attribute__((vector_size(16)));

inline v4u32 rotl(v4u32 v, int n) { return (v << n) | (v >> (32 - n)); }

inline void quarter(v4u32 *x, int a, int b, int c, int d) {
  x[a] += x[b]; x[d] = rotl(x[d] ^ x[a], 16);
  x[c] += x[d]; x[b] = rotl(x[b] ^ x[c], 12);
  x[a] += x[b]; x[d] = rotl(x[d] ^ x[a], 8);
  x[c] += x[d]; x[b] = rotl(x[b] ^ x[c], 7);
}

inline uint32_t load_le(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

inline void store_le(uint8_t *p, uint32_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  std::memcpy(p, &v, sizeof v);
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

void ChaCha20::block(uint8_t out[kBlockBytes]) noexcept { blocks(out, 1); }

void ChaCha20::blocks(uint8_t *out, size_t n) noexcept {
  constexpr int kLanes = 4;
  while (n > 0) {
    const int lanes = n < kLanes ? static_cast<int>(n) : kLanes;
    v4u32 in[16], x[16];
    for (int w = 0; w < 16; ++w) in[w] = v4u32{state_[w], state_[w], state_[w], state_[w]};
    const uint64_t counter = uint64_t{state_[13]} << 32 | state_[12];
    const uint64_t c[kLanes] = {counter, counter + 1, counter + 2, counter + 3};
    in[12] = v4u32{static_cast<uint32_t>(c[0]), static_cast<uint32_t>(c[1]),
                   static_cast<uint32_t>(c[2]), static_cast<uint32_t>(c[3])};
    in[13] = v4u32{static_cast<uint32_t>(c[0] >> 32), static_cast<uint32_t>(c[1] >> 32),
                   static_cast<uint32_t>(c[2] >> 32), static_cast<uint32_t>(c[3] >> 32)};
    for (int w = 0; w < 16; ++w) x[w] = in[w];
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
    uint32_t words[16][kLanes];
    for (int w = 0; w < 16; ++w) {
      x[w] += in[w];
      std::memcpy(words[w], &x[w], sizeof words[w]);
    }
    for (int l = 0; l < lanes; ++l) {
      for (int w = 0; w < 16; ++w) store_le(out + 4 * w, words[w][l]);
      out += kBlockBytes;
    }
    // 2^32 blocks (256 GiB) per nonce: past that, move into the nonce so that no block repeats.
    const uint64_t next = counter + static_cast<uint64_t>(lanes);
    state_[12] = static_cast<uint32_t>(next);
    state_[13] = static_cast<uint32_t>(next >> 32);
    n -= static_cast<size_t>(lanes);
  }
}

void RandomStream::seed(const uint8_t seed[ChaCha20::kSeedBytes]) noexcept {
  cipher_.init(seed, seed + 32, 0);
  pos_ = kBufferBytes;
  seeded_ = true;
}

void RandomStream::refill() noexcept {
  cipher_.blocks(buffer_, kBufferBytes / ChaCha20::kBlockBytes);
  pos_ = 0;
}

}  // namespace snowflake
