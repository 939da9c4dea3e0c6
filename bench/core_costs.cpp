// What one ID costs inside the core, outside the server: the random bits behind
// snowflake_uuidv7() and ulid() (each ChaCha20 kernel this CPU runs), the clock reading
// behind every ID, and the step that takes the next value of a stream. Best of 15
// interleaved runs each. Prints three Markdown tables.
#include "core/chacha.hpp"
#include "core/generator.hpp"
#include "core/id128.hpp"
#include "core/second_stream.hpp"
#include "core/tsc_clock.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

using snowflake::ChaCha20;

namespace {

volatile uint32_t observed;  // the keystream's checksum goes here, so no batch is optimised away

const char *name(ChaCha20::Kernel kernel) {
  switch (kernel) {
    case ChaCha20::Kernel::kPortable:
      return "portable";
    case ChaCha20::Kernel::kAvx2:
      return "AVX2";
  }
  return "?";
}

}  // namespace

int64_t mono_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// ns per reading of the monotonic clock: clock_gettime(), and where the CPU has a counter
// (x86-64's time-stamp counter, ARM64's CNTVCT_EL0), the counter alone and the counter
// through TscMono (as IDs read it).
void clock_costs() {
  constexpr int kRuns = 15, kReads = 1000000;
  struct Way {
    const char *name;
    int64_t (*read)();
    double best = 1e300;
  };
#if defined(SNOWFLAKE_CPU_COUNTER)
  static snowflake::TscMono tsc_mono(snowflake::cpu_counter_hz());
#if defined(__x86_64__)
  constexpr const char *kAlone = "time-stamp counter alone";
  constexpr const char *kThrough = "time-stamp counter through TscMono";
#else
  constexpr const char *kAlone = "CNTVCT_EL0 alone";
  constexpr const char *kThrough = "CNTVCT_EL0 through TscMono";
#endif
  Way ways[] = {
      {"clock_gettime(CLOCK_MONOTONIC)", [] { return mono_ns(); }},
      {kAlone, [] { return static_cast<int64_t>(snowflake::read_cpu_counter()); }},
      {kThrough,
       [] { return tsc_mono.now([] { return snowflake::read_cpu_counter(); }, mono_ns); }},
  };
#else
  Way ways[] = {{"clock_gettime(CLOCK_MONOTONIC)", [] { return mono_ns(); }}};
#endif
  int64_t sum = 0;
  for (int run = 0; run < kRuns; ++run) {
    for (Way &way : ways) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kReads; ++i) sum += way.read();
      const std::chrono::duration<double, std::nano> took =
          std::chrono::steady_clock::now() - start;
      way.best = std::min(way.best, took.count() / kReads);
    }
  }
  observed = static_cast<uint32_t>(sum);
  std::printf("\n| clock reading | ns | × clock_gettime |\n|---|---:|---:|\n");
  for (const Way &way : ways)
    std::printf("| %s | %.1f | %.2f |\n", way.name, way.best, way.best / ways[0].best);

  // Which of them IDs take here, by the server's own rule.
  char source[32];
  snowflake::read_clocksource(source, sizeof source);
  uint64_t hz = 0;
#if defined(SNOWFLAKE_CPU_COUNTER)
  hz = snowflake::cpu_counter_hz();
#endif
  const bool counter = snowflake::counter_is_kernel_clock(source, hz);
  source[std::strcspn(source, "\n")] = '\0';
  if (counter)
    std::printf(
        "\nThis machine's kernel keeps time by `%s`: IDs read the counter, through "
        "TscMono.\n",
        source);
  else
    std::printf(
        "\nThis machine's kernel keeps time by `%s`, not by the CPU's counter: IDs read "
        "clock_gettime().\n",
        source[0] != '\0' ? source : "an unknown clocksource");
}

// ns per value taken from a stream, one thread, the clock standing still (so every value
// runs ahead within its millisecond, as in a burst): the compare-and-swap step of
// snowflake() and snowflake_uuidv7() (next_state), ulid()'s step under its spinlock
// (ulid_next), and that of rsxid() and ksuid() (seconds::next: next_state with its floor, on
// the stream of the caller's shard, found in the kind's table by issue_for_shard).
void step_costs() {
  constexpr int kRuns = 15, kSteps = 1000000;
  constexpr uint64_t kNowMs = 1000;
  const snowflake::Limits limits{uint64_t{1} << 40, uint64_t{1} << 44, UINT64_MAX};
  // A time of today for the one-second streams: 1,000,000 values fit in its second.
  constexpr uint64_t kNowSecondsMs = 1767225600000;
  double best_cas = 1e300, best_ulid = 1e300, best_second = 1e300;
  uint64_t sum = 0;
  for (int run = 0; run < kRuns; ++run) {
    std::atomic<uint64_t> last{0};
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kSteps; ++i) sum += snowflake::next_state<10>(last, kNowMs, limits).value;
    std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    best_cas = std::min(best_cas, took.count() / kSteps);

    snowflake::UlidSlotT<snowflake::SpinLock> slot;
    slot.init();
    start = std::chrono::steady_clock::now();
    for (int i = 0; i < kSteps; ++i)
      sum += static_cast<uint64_t>(snowflake::ulid_next(slot, kNowMs, true, i, limits).value);
    took = std::chrono::steady_clock::now() - start;
    best_ulid = std::min(best_ulid, took.count() / kSteps);

    snowflake::seconds::StreamsT<snowflake::SpinLock> second;
    second.init();
    start = std::chrono::steady_clock::now();
    for (int i = 0; i < kSteps; ++i)
      sum += snowflake::issue_for_shard(second.shards, 7, [&](std::atomic<uint64_t> &word) {
               return snowflake::seconds::next(word, second.floor_unix_ms, kNowSecondsMs, 1024,
                                               UINT64_MAX, snowflake::seconds::kKsuid);
             }).value;
    took = std::chrono::steady_clock::now() - start;
    best_second = std::min(best_second, took.count() / kSteps);
  }
  observed = static_cast<uint32_t>(sum);
  std::printf("\n| taking the next value | ns |\n|---|---:|\n");
  std::printf("| snowflake(), snowflake_uuidv7(): compare-and-swap (next_state) | %.1f |\n",
              best_cas);
  std::printf("| ulid(): 128 bits under a spinlock (ulid_next) | %.1f |\n", best_ulid);
  std::printf(
      "| rsxid(), ksuid(): the shard's one-second stream (issue_for_shard, seconds::next) | "
      "%.1f |\n",
      best_second);
}

int main() {
  constexpr int kRuns = 15, kBatches = 100000;
  constexpr double kBatchBytes = ChaCha20::kBatchBlocks * ChaCha20::kBlockBytes;
  const uint8_t key[32] = {1}, nonce[12] = {2};
  double best[2] = {1e300, 1e300};  // ns per batch, by kernel
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
  std::printf(
      "| kernel | ns per 8 blocks | ns per 8 bytes | × portable |\n"
      "|---|---:|---:|---:|\n");
  for (const ChaCha20::Kernel kernel : ChaCha20::kKernels) {
    if (!ChaCha20::runs_here(kernel)) continue;
    const double ns = best[static_cast<int>(kernel)];
    std::printf("| %s%s | %.1f | %.2f | %.2f |\n", name(kernel),
                kernel == ChaCha20::best_kernel() ? " (used)" : "", ns, ns / kBatchBytes * 8,
                ns / best[0]);
  }
  observed = sink;
  clock_costs();
  step_costs();
  return 0;
}
