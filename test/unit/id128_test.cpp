// Unit tests of the 128-bit kinds: the ULID text codec, the UUIDv7 and ULID layouts, the ULID
// generator, and the ChaCha20 stream.
#include "core/chacha.hpp"
#include "core/id128.hpp"
#include "core/ulid_codec.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace snowflake;
using UlidSlot = UlidSlotT<SpinLock>;

namespace {

std::string encode(const uint8_t b[16]) {
  char text[kUlidTextLen];
  ulid_encode(b, text);
  return std::string(text, kUlidTextLen);
}

UlidParse decode(const std::string &s, uint8_t out[16]) {
  return ulid_decode(s.data(), s.size(), out);
}

Limits lim(uint64_t lead) { return Limits{lead, kMaxUnixMs48, UINT64_MAX}; }

}  // namespace

TEST(UlidCodec, SpecExampleDecodesToItsMillisecond) {
  uint8_t b[16];
  ASSERT_EQ(decode("01ARYZ6S41TSV4RRFFQ69G5FAV", b), UlidParse::kOk);
  EXPECT_EQ(uuid_unix_ms(b), 1469918176385u);  // the spec's decodeTime example
  ASSERT_EQ(decode("01ARZ3NDEKTSV4RRFFQ69G5FAV", b), UlidParse::kOk);
  EXPECT_EQ(uuid_unix_ms(b), 1469922850259u);  // 2016-07-30T23:54:10.259Z
  EXPECT_EQ(encode(b), "01ARZ3NDEKTSV4RRFFQ69G5FAV");
}

TEST(UlidCodec, EveryAlphabetCharacterInEveryCase) {
  const std::string alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  for (size_t i = 0; i < alphabet.size(); ++i) {
    std::string s(26, '0');
    s[25] = alphabet[i];
    uint8_t b[16];
    ASSERT_EQ(decode(s, b), UlidParse::kOk) << s;
    EXPECT_EQ(b[15], i) << s;
    EXPECT_EQ(encode(b), s);
    s[25] = static_cast<char>(std::tolower(alphabet[i]));
    ASSERT_EQ(decode(s, b), UlidParse::kOk) << s;
    EXPECT_EQ(b[15], i) << s;
  }
}

TEST(UlidCodec, Edges) {
  uint8_t zeros[16] = {};
  EXPECT_EQ(encode(zeros), "00000000000000000000000000");
  uint8_t ones[16];
  std::memset(ones, 0xff, sizeof ones);
  EXPECT_EQ(encode(ones), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
  uint8_t b[16];
  ASSERT_EQ(decode("7ZZZZZZZZZZZZZZZZZZZZZZZZZ", b), UlidParse::kOk);
  EXPECT_EQ(std::memcmp(b, ones, 16), 0);
  ASSERT_EQ(decode("00000000000000000000000000", b), UlidParse::kOk);
  EXPECT_EQ(std::memcmp(b, zeros, 16), 0);
}

TEST(UlidCodec, InvalidInput) {
  uint8_t b[16];
  EXPECT_EQ(decode("", b), UlidParse::kBadLength);
  EXPECT_EQ(decode("01ARZ3NDEKTSV4RRFFQ69G5FA", b), UlidParse::kBadLength);
  EXPECT_EQ(decode("01ARZ3NDEKTSV4RRFFQ69G5FAVV", b), UlidParse::kBadLength);
  for (char c : std::string("ILOUilou-_ !\x7f\x80\xff")) {
    std::string s = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    s[12] = c;
    EXPECT_EQ(decode(s, b), UlidParse::kBadCharacter) << int(c);
  }
  std::string nul = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
  nul[3] = '\0';
  EXPECT_EQ(decode(nul, b), UlidParse::kBadCharacter);
  EXPECT_EQ(decode("80000000000000000000000000", b), UlidParse::kOverflow);
  EXPECT_EQ(decode("ZZZZZZZZZZZZZZZZZZZZZZZZZZ", b), UlidParse::kOverflow);
}

TEST(UlidCodec, RoundTripsRandomValues) {
  RandomStream rng;
  uint8_t seed[ChaCha20::kSeedBytes] = {1, 2, 3};
  rng.seed(seed);
  for (int i = 0; i < 10000; ++i) {
    uint8_t b[16], back[16];
    const uint64_t words[2] = {rng.next_u64(), rng.next_u64()};
    std::memcpy(b, words, 16);
    ASSERT_EQ(decode(encode(b), back), UlidParse::kOk);
    ASSERT_EQ(std::memcmp(b, back, 16), 0);
  }
}

TEST(UlidCodec, TextOrderIsByteOrder) {
  uint8_t a[16] = {}, b[16] = {};
  a[15] = 31;
  b[14] = 1;
  EXPECT_LT(std::memcmp(a, b, 16), 0);
  EXPECT_LT(encode(a), encode(b));
}

TEST(Uuidv7, Rfc9562Bits) {
  uint8_t u[16];
  uuidv7_compose(u, 0x017F22E279B0, 0xCC3, 0x18C4DC0C0C07398Full);
  // RFC 9562 appendix A.6's example value.
  const uint8_t expected[16] = {0x01, 0x7F, 0x22, 0xE2, 0x79, 0xB0, 0x7C, 0xC3,
                                0x98, 0xC4, 0xDC, 0x0C, 0x0C, 0x07, 0x39, 0x8F};
  EXPECT_EQ(std::memcmp(u, expected, 16), 0);
  EXPECT_EQ(uuid_version(u), 7);
  EXPECT_EQ(uuid_unix_ms(u), 0x017F22E279B0u);
  uint8_t ones[16];
  uuidv7_compose(ones, kMaxUnixMs48, 0xfff, ~uint64_t{0});
  EXPECT_EQ(ones[6] >> 4, 7);
  EXPECT_EQ(ones[8] >> 6, 2);
  uint8_t nil[16] = {};
  EXPECT_EQ(uuid_version(nil), -1);  // variant 0: not an RFC 9562 UUID
}

TEST(UlidGenerator, SameMillisecondIsPreviousPlusOne) {
  UlidSlot slot;
  slot.init();
  const UlidNext a = ulid_next(slot, 1000, true, 12345, lim(1000));
  ASSERT_EQ(a.step, Step::kIssued);
  EXPECT_EQ(a.value, (u128{1000} << 80) | 12345);
  const UlidNext b = ulid_next(slot, 1000, true, 999999, lim(1000));
  EXPECT_EQ(b.value, a.value + 1);
  const UlidNext c = ulid_next(slot, 1001, true, 7, lim(1000));
  EXPECT_EQ(c.value, (u128{1001} << 80) | 7);
  // The clock going back changes nothing: still previous plus one.
  EXPECT_EQ(ulid_next(slot, 990, true, 5, lim(1000)).value, c.value + 1);
}

TEST(UlidGenerator, OverflowTakesTheNextMillisecond) {
  UlidSlot slot;
  slot.init();
  const u128 all_ones = (u128{1} << 80) - 1;
  EXPECT_EQ(ulid_next(slot, 1000, true, all_ones, lim(1000)).value, (u128{1000} << 80) | all_ones);
  const UlidNext next = ulid_next(slot, 1000, true, 3, lim(1000));
  ASSERT_EQ(next.step, Step::kIssued);
  EXPECT_EQ(next.value, u128{1001} << 80);
  // With no lead allowed, the same overflow waits for the clock instead.
  UlidSlot strict;
  strict.init();
  ulid_next(strict, 1000, true, all_ones, lim(0));
  const UlidNext wait = ulid_next(strict, 1000, true, 3, lim(0));
  EXPECT_EQ(wait.step, Step::kWait);
  EXPECT_EQ(wait.wait_ms, 1u);
}

TEST(UlidGenerator, AsksForRandomBitsOnlyForANewMillisecond) {
  UlidSlot slot;
  slot.init();
  EXPECT_TRUE(slot.likely_new_ms(1000));
  EXPECT_EQ(ulid_next(slot, 1000, false, 0, lim(1000)).step, Step::kNeedRandom);
  EXPECT_EQ(slot.hi.load(), 0u);  // nothing issued
  const UlidNext a = ulid_next(slot, 1000, true, 77, lim(1000));
  EXPECT_FALSE(slot.likely_new_ms(1000));
  const UlidNext b = ulid_next(slot, 1000, false, 0, lim(1000));
  ASSERT_EQ(b.step, Step::kIssued);
  EXPECT_EQ(b.value, a.value + 1);
  EXPECT_TRUE(slot.likely_new_ms(1001));
}

TEST(UlidGenerator, NothingIsIssuedAtTheReservation) {
  UlidSlot slot;
  slot.init();
  const UlidNext r = ulid_next(slot, 1000, true, 1, Limits{10, kMaxUnixMs48, 1000});
  EXPECT_EQ(r.step, Step::kReserve);
  EXPECT_EQ(r.wait_ms, 1000u);
  EXPECT_EQ(slot.hi.load(), 0u);
  EXPECT_EQ(ulid_next(slot, 1000, true, 1, Limits{10, kMaxUnixMs48, 1001}).step, Step::kIssued);
}

TEST(UlidGenerator, EndOfTheRange) {
  UlidSlot slot;
  slot.init();
  const u128 all_ones = (u128{1} << 80) - 1;
  EXPECT_EQ(ulid_next(slot, kMaxUnixMs48, true, all_ones, lim(10)).step, Step::kIssued);
  EXPECT_EQ(ulid_next(slot, kMaxUnixMs48, true, 0, lim(10)).step, Step::kExhausted);
}

TEST(UlidGenerator, ThreadsNeverCollideAndEachSeesIncreasingValues) {
  UlidSlot slot;
  slot.init();
  constexpr int kThreads = 4, kPer = 100000;
  std::vector<std::vector<u128>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPer; ++i)
        got[t].push_back(ulid_next(slot, 5000 + i / 1000, true, u128(i) * 7919, lim(1000)).value);
    });
  for (auto &th : threads) th.join();
  std::set<u128> all;
  for (auto &v : got) {
    for (size_t i = 1; i < v.size(); ++i) ASSERT_LT(v[i - 1], v[i]);
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.size(), size_t{kThreads} * kPer);
}

// Little-endian words of a serialized block.
static uint32_t le_word(const uint8_t *p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

struct Rfc8439Block {
  uint8_t key[32];
  uint8_t nonce[12];
  uint32_t counter;
  uint8_t expected[64];
};

// RFC 8439 appendix A.1 test vector 1 (all zero, counter 0) and section 2.3.2 (key 00 .. 1f,
// nonce 00 00 00 09 00 00 00 4a 00 00 00 00, counter 1).
const Rfc8439Block kRfc8439Blocks[] = {
    {{}, {}, 0, {0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53,
                 0x86, 0xbd, 0x28, 0xbd, 0xd2, 0x19, 0xb8, 0xa0, 0x8d, 0xed, 0x1a, 0xa8, 0x36,
                 0xef, 0xcc, 0x8b, 0x77, 0x0d, 0xc7, 0xda, 0x41, 0x59, 0x7c, 0x51, 0x57, 0x48,
                 0x8d, 0x77, 0x24, 0xe0, 0x3f, 0xb8, 0xd8, 0x4a, 0x37, 0x6a, 0x43, 0xb8, 0xf4,
                 0x15, 0x18, 0xa1, 0x1c, 0xc3, 0x87, 0xb6, 0x69, 0xb2, 0xee, 0x65, 0x86}},
    {{0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
      16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31},
     {0, 0, 0, 0x09, 0, 0, 0, 0x4a, 0, 0, 0, 0},
     1,
     {0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3,
      0x20, 0x71, 0xc4, 0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22,
      0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e, 0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa,
      0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2, 0xb5, 0x12, 0x9c, 0xd1,
      0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e}},
};

TEST(ChaCha20, Rfc8439VectorsInTheReferenceAndEveryKernel) {
  for (const Rfc8439Block &v : kRfc8439Blocks) {
    ChaCha20 c;
    c.init(v.key, v.nonce, v.counter);
    uint8_t out[64];
    c.block(out);
    EXPECT_EQ(std::memcmp(out, v.expected, 64), 0) << "counter " << v.counter;
    for (const ChaCha20::Kernel kernel : ChaCha20::kKernels) {
      if (!ChaCha20::runs_here(kernel)) continue;
      ChaCha20 k;
      k.init(v.key, v.nonce, v.counter);
      uint32_t got[16][ChaCha20::kBatchBlocks];
      k.batch(got, kernel);
      for (int w = 0; w < 16; ++w)
        ASSERT_EQ(got[w][0], le_word(v.expected + 4 * w))
            << "kernel " << static_cast<int>(kernel) << " word " << w;
    }
  }
}

// Block b of a batch as the reference computes it, as host-order words.
static std::vector<uint32_t> reference_words(ChaCha20 &c) {
  uint8_t bytes[ChaCha20::kBlockBytes];
  c.block(bytes);
  std::vector<uint32_t> words(16);
  for (int w = 0; w < 16; ++w) words[w] = le_word(bytes + 4 * w);
  return words;
}

TEST(ChaCha20, EveryKernelGivesTheReferenceBlocks) {
  uint8_t key[32], nonce[12];
  for (int i = 0; i < 32; ++i) key[i] = static_cast<uint8_t>(7 * i + 1);
  for (int i = 0; i < 12; ++i) nonce[i] = static_cast<uint8_t>(0xf0 - i);
  int kernels_run = 0;
  for (const ChaCha20::Kernel kernel : ChaCha20::kKernels) {
    if (!ChaCha20::runs_here(kernel)) {
      std::printf("kernel %d does not run on this machine (or is not built): not tested\n",
                  static_cast<int>(kernel));
      continue;
    }
    ++kernels_run;
    // Counters from 2^32 - 12: the second batch crosses into the nonce's first word.
    ChaCha20 fast, ref;
    fast.init(key, nonce, 0xfffffff4u);
    ref.init(key, nonce, 0xfffffff4u);
    for (int batch = 0; batch < 3; ++batch) {
      uint32_t got[16][ChaCha20::kBatchBlocks];
      fast.batch(got, kernel);
      for (size_t b = 0; b < ChaCha20::kBatchBlocks; ++b) {
        const std::vector<uint32_t> want = reference_words(ref);
        for (int w = 0; w < 16; ++w)
          ASSERT_EQ(got[w][b], want[w]) << "kernel " << static_cast<int>(kernel) << " batch "
                                        << batch << " block " << b << " word " << w;
      }
    }
  }
  EXPECT_GE(kernels_run, 1);
  EXPECT_TRUE(ChaCha20::runs_here(ChaCha20::best_kernel()));
}

TEST(ChaCha20, StreamIsTheKeystreamWordSliced) {
  uint8_t seed[ChaCha20::kSeedBytes] = {};
  RandomStream rng;
  EXPECT_FALSE(rng.seeded());
  rng.seed(seed);
  EXPECT_TRUE(rng.seeded());
  constexpr size_t kBatchWords = 16 * ChaCha20::kBatchBlocks;
  std::vector<uint32_t> got(2 * kBatchWords + 6);  // into the third batch
  for (size_t i = 0; i < got.size(); i += 2) {
    const uint64_t v = rng.next_u64();
    std::memcpy(&got[i], &v, sizeof v);
  }
  ChaCha20 ref;
  ref.init(seed, seed + 32, 0);
  std::vector<uint32_t> want;
  for (int batch = 0; batch < 3; ++batch) {
    std::vector<std::vector<uint32_t>> blocks;
    for (size_t b = 0; b < ChaCha20::kBatchBlocks; ++b) blocks.push_back(reference_words(ref));
    for (int w = 0; w < 16; ++w)
      for (size_t b = 0; b < ChaCha20::kBatchBlocks; ++b) want.push_back(blocks[b][w]);
  }
  want.resize(got.size());
  EXPECT_EQ(got, want);
}

TEST(ChaCha20, BytesAFewAtATimeAreTheStreamsBytes) {
  // 11 then 5 bytes (a KSUID's random tail, then the rest of 16) as next_u64 gives them twice,
  // over a batch's end: 32 pairs fill a batch of 512 bytes exactly.
  uint8_t seed[ChaCha20::kSeedBytes] = {7};
  RandomStream words, bytes;
  words.seed(seed);
  bytes.seed(seed);
  for (int i = 0; i < 40; ++i) {
    uint8_t want[16], got[16];
    const uint64_t w[2] = {words.next_u64(), words.next_u64()};
    std::memcpy(want, w, sizeof want);
    bytes.next_bytes<11>(got);
    bytes.next_bytes<5>(got + 11);
    ASSERT_EQ(0, std::memcmp(want, got, sizeof want)) << i;
  }
}

TEST(ChaCha20, DifferentSeedsDifferentStreams) {
  uint8_t s1[ChaCha20::kSeedBytes] = {}, s2[ChaCha20::kSeedBytes] = {};
  s2[43] = 1;  // the nonce's last byte
  RandomStream a, b;
  a.seed(s1);
  b.seed(s2);
  EXPECT_NE(a.next_u64(), b.next_u64());
}
