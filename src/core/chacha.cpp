#include "core/chacha.hpp"

#include <cstring>

namespace snowflake {

namespace {

#define SNOWFLAKE_ROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define SNOWFLAKE_QUARTER(x, a, b, c, d)    \
  do {                                      \
    x[a] += x[b];                           \
    x[d] = SNOWFLAKE_ROTL(x[d] ^ x[a], 16); \
    x[c] += x[d];                           \
    x[b] = SNOWFLAKE_ROTL(x[b] ^ x[c], 12); \
    x[a] += x[b];                           \
    x[d] = SNOWFLAKE_ROTL(x[d] ^ x[a], 8);  \
    x[c] += x[d];                           \
    x[b] = SNOWFLAKE_ROTL(x[b] ^ x[c], 7);  \
  } while (0)

// The 20 rounds, on one block's words (T = uint32_t) or on a vector of blocks side by side,
// one vector per word. Always inlined, so that a kernel's target (AVX2) applies.
template <typename T>
__attribute__((always_inline)) inline void rounds(T x[16]) {
  for (int round = 0; round < 10; ++round) {
    SNOWFLAKE_QUARTER(x, 0, 4, 8, 12);
    SNOWFLAKE_QUARTER(x, 1, 5, 9, 13);
    SNOWFLAKE_QUARTER(x, 2, 6, 10, 14);
    SNOWFLAKE_QUARTER(x, 3, 7, 11, 15);
    SNOWFLAKE_QUARTER(x, 0, 5, 10, 15);
    SNOWFLAKE_QUARTER(x, 1, 6, 11, 12);
    SNOWFLAKE_QUARTER(x, 2, 7, 8, 13);
    SNOWFLAKE_QUARTER(x, 3, 4, 9, 14);
  }
}

// GCC/Clang vector extensions: SSE2 on x86-64 and NEON on ARM64 for four lanes; AVX2 for
// eight, in the kernel built for it.
typedef uint32_t v4u32 __attribute__((vector_size(16)));
typedef uint32_t v8u32 __attribute__((vector_size(32)));

// Blocks first .. first + lanes - 1 of the batch that starts at counter, a vector lane each,
// into out's columns.
template <typename V>
__attribute__((always_inline)) inline void sliced(const uint32_t state[16], uint64_t counter,
                                                  uint32_t out[16][ChaCha20::kBatchBlocks],
                                                  int first) {
  constexpr int kLanes = sizeof(V) / sizeof(uint32_t);
  V in[16], x[16];
  for (int w = 0; w < 16; ++w) in[w] = V{} + state[w];
  for (int l = 0; l < kLanes; ++l) {
    const uint64_t c = counter + static_cast<uint64_t>(first + l);
    in[12][l] = static_cast<uint32_t>(c);
    in[13][l] = static_cast<uint32_t>(c >> 32);
  }
  for (int w = 0; w < 16; ++w) x[w] = in[w];
  rounds(x);
  for (int w = 0; w < 16; ++w) {
    x[w] += in[w];
    std::memcpy(&out[w][first], &x[w], sizeof x[w]);
  }
}

using KernelFn = void (*)(const uint32_t *, uint64_t, uint32_t (*)[ChaCha20::kBatchBlocks]);

void kernel_portable(const uint32_t *state, uint64_t counter,
                     uint32_t out[16][ChaCha20::kBatchBlocks]) {
  for (int first = 0; first < static_cast<int>(ChaCha20::kBatchBlocks); first += 4)
    sliced<v4u32>(state, counter, out, first);
}

#if defined(__x86_64__)
#define SNOWFLAKE_X86_KERNELS 1
__attribute__((target("avx2"))) void kernel_avx2(const uint32_t *state, uint64_t counter,
                                                 uint32_t out[16][ChaCha20::kBatchBlocks]) {
  sliced<v8u32>(state, counter, out, 0);
}
#endif

static_assert(ChaCha20::kBatchBlocks == 8, "the kernels compute 8 blocks");

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

bool ChaCha20::runs_here(Kernel kernel) noexcept {
  switch (kernel) {
    case Kernel::kPortable:
      return true;
#ifdef SNOWFLAKE_X86_KERNELS
    // The checks include the operating system's support for the wider registers.
    case Kernel::kAvx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2");
#endif
    default:
      return false;
  }
}

ChaCha20::Kernel ChaCha20::best_kernel() noexcept {
  if (runs_here(Kernel::kAvx2)) return Kernel::kAvx2;
  return Kernel::kPortable;
}

void ChaCha20::init(const uint8_t *key, const uint8_t *nonce, uint32_t counter) noexcept {
  state_[0] = 0x61707865;  // "expand 32-byte k"
  state_[1] = 0x3320646e;
  state_[2] = 0x79622d32;
  state_[3] = 0x6b206574;
  for (int i = 0; i < 8; ++i) state_[4 + i] = load_le(key + 4 * i);
  state_[12] = counter;
  for (int i = 0; i < 3; ++i) state_[13 + i] = load_le(nonce + 4 * i);
}

// The block counter is word 12; past 2^32 blocks (256 GiB) it carries into word 13, the
// nonce's first word, so that no block repeats.
void ChaCha20::advance(uint64_t blocks) noexcept {
  const uint64_t next = (uint64_t{state_[13]} << 32 | state_[12]) + blocks;
  state_[12] = static_cast<uint32_t>(next);
  state_[13] = static_cast<uint32_t>(next >> 32);
}

void ChaCha20::block(uint8_t out[kBlockBytes]) noexcept {
  uint32_t x[16];
  std::memcpy(x, state_, sizeof x);
  rounds(x);
  for (int w = 0; w < 16; ++w) store_le(out + 4 * w, x[w] + state_[w]);
  advance(1);
}

void ChaCha20::batch(uint32_t out[16][kBatchBlocks], Kernel kernel) noexcept {
  KernelFn fn = kernel_portable;
#ifdef SNOWFLAKE_X86_KERNELS
  if (kernel == Kernel::kAvx2) fn = kernel_avx2;
#endif
  (void)kernel;
  fn(state_, uint64_t{state_[13]} << 32 | state_[12], out);
  advance(kBatchBlocks);
}

void RandomStream::seed(const uint8_t seed[ChaCha20::kSeedBytes]) noexcept {
  cipher_.init(seed, seed + 32, 0);
  kernel_ = ChaCha20::best_kernel();
  pos_ = kBufferBytes;
  seeded_ = true;
}

void RandomStream::refill() noexcept {
  cipher_.batch(buffer_, kernel_);
  pos_ = 0;
}

}  // namespace snowflake
