// The cost of the random bits behind uuidv7() and ulid(): each ChaCha20 kernel this CPU
// runs, best of 15 runs of 100,000 batches, interleaved. Prints a Markdown table.
#include "chacha.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

using snowflake::ChaCha20;

namespace {

volatile uint32_t observed;  // the keystream's checksum goes here, so no batch is optimised away

const char *name(ChaCha20::Kernel kernel) {
  switch (kernel) {
    case ChaCha20::Kernel::kPortable: return "portable";
    case ChaCha20::Kernel::kAvx2: return "AVX2";
    case ChaCha20::Kernel::kAvx512vl: return "AVX-512VL";
  }
  return "?";
}

}  // namespace

int main() {
  constexpr int kRuns = 15, kBatches = 100000;
  constexpr double kBatchBytes = ChaCha20::kBatchBlocks * ChaCha20::kBlockBytes;
  const uint8_t key[32] = {1}, nonce[12] = {2};
  double best[3] = {1e300, 1e300, 1e300};  // ns per batch, by kernel
  alignas(64) uint32_t out[16][ChaCha20::kBatchBlocks];
  uint32_t sink = 0;
  for (int run = 0; run < kRuns; ++run) {
    for (const ChaCha20::Kernel kernel : ChaCha20::kKernels) {
      if (!ChaCha20::runs_here(kernel)) continue;
      ChaCha20 cipher;
      cipher.init(key, nonce, 0);
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kBatches; ++i) {
        cipher.batch(out, kernel);
        sink += out[i & 15][i & 7];
      }
      const std::chrono::duration<double, std::nano> took =
          std::chrono::steady_clock::now() - start;
      double &b = best[static_cast<int>(kernel)];
      b = std::min(b, took.count() / kBatches);
    }
  }
  std::printf("| kernel | ns per 8 blocks | ns per 8 bytes | × portable |\n"
              "|---|---:|---:|---:|\n");
  for (const ChaCha20::Kernel kernel : ChaCha20::kKernels) {
    if (!ChaCha20::runs_here(kernel)) continue;
    const double ns = best[static_cast<int>(kernel)];
    std::printf("| %s%s | %.1f | %.2f | %.2f |\n", name(kernel),
                kernel == ChaCha20::best_kernel() ? " (used)" : "", ns, ns / kBatchBytes * 8,
                ns / best[0]);
  }
  observed = sink;
  return 0;
}
