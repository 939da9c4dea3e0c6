// ChaCha20 (RFC 8439) as a buffered random-number generator: the random parts of UUIDv7 and
// ULID values. Seeded from the operating system's CSPRNG by the caller, per process.
#pragma once
#include "core/pg_free.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace snowflake {

class ChaCha20 {
 public:
  static constexpr size_t kSeedBytes = 32 + 12;  // key and nonce
  static constexpr size_t kBlockBytes = 64;
  static constexpr size_t kBatchBlocks = 8;  // blocks computed side by side

  // The ways to compute a batch. Every kernel gives the same words; they differ in speed
  // (bench/core_costs.cpp; docs/benchmarks.md says why there are these two).
  enum class Kernel { kPortable, kAvx2 };
  static constexpr Kernel kKernels[] = {Kernel::kPortable, Kernel::kAvx2};
  // Whether this CPU (and its operating system) can run the kernel.
  static bool runs_here(Kernel kernel) noexcept;
  // The fastest kernel this CPU runs.
  static Kernel best_kernel() noexcept;

  // key: 32 bytes, nonce: 12 bytes, counter: the first block's counter.
  void init(const uint8_t *key, const uint8_t *nonce, uint32_t counter) noexcept;
  // One keystream block in RFC 8439's byte order, computed one word at a time (the reference
  // the kernels are tested against); the counter moves on by one.
  void block(uint8_t out[kBlockBytes]) noexcept;
  // kBatchBlocks consecutive blocks, word-sliced: word w of the batch's block b is
  // out[w][b], in the host's byte order. The counter moves on by kBatchBlocks. The kernel
  // must run here.
  void batch(uint32_t out[16][kBatchBlocks], Kernel kernel) noexcept;

 private:
  void advance(uint64_t blocks) noexcept;
  uint32_t state_[16];
};

// Hands out keystream bytes 8 at a time from one batch of blocks, erasing them from the
// buffer as they go; seeded() is false until seed(). The bytes come in the batch's
// word-sliced order, not the blocks' order: a permutation of the same keystream.
class RandomStream {
 public:
  void seed(const uint8_t seed[ChaCha20::kSeedBytes]) noexcept;
  bool seeded() const noexcept { return seeded_; }

  // The next N bytes (N at most 64), erased from the buffer as next_u64's: a KSUID's 11.
  template <size_t N>
  void next_bytes(uint8_t out[N]) noexcept {
    static_assert(N <= 64, "a few bytes at a time");
    if (pos_ > kBufferBytes - N) refill();
    uint8_t *const bytes = reinterpret_cast<uint8_t *>(buffer_) + pos_;
    std::memcpy(out, bytes, N);
    std::memset(bytes, 0, N);
    pos_ += N;
  }

  // The next 8 bytes (the path every ID takes: inline, fixed-size copies).
  uint64_t next_u64() noexcept {
    if (pos_ > kBufferBytes - sizeof(uint64_t)) refill();
    uint8_t *const bytes = reinterpret_cast<uint8_t *>(buffer_) + pos_;
    uint64_t v;
    std::memcpy(&v, bytes, sizeof v);
    std::memset(bytes, 0, sizeof v);
    pos_ += sizeof v;
    return v;
  }

 private:
  static constexpr size_t kBufferBytes = ChaCha20::kBatchBlocks * ChaCha20::kBlockBytes;
  void refill() noexcept;

  ChaCha20 cipher_;
  ChaCha20::Kernel kernel_ = ChaCha20::Kernel::kPortable;
  alignas(64) uint32_t buffer_[16][ChaCha20::kBatchBlocks];
  size_t pos_ = kBufferBytes;
  bool seeded_ = false;
};

}  // namespace snowflake
