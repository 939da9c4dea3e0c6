// Unit tests of masking: the published vectors of each primitive (AES-256, SipHash-2-4,
// uuidv47), the key file's format, and the token: known answers, round trips, rejection of
// changed and random tokens, rotation.
#include "core/mask.hpp"

#include "core/id128.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sf = snowflake;

namespace {

std::string hex(const uint8_t *b, size_t n) {
  static const char d[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += d[b[i] >> 4];
    s += d[b[i] & 15];
  }
  return s;
}

void unhex(const char *h, uint8_t *out) {
  for (size_t i = 0; h[2 * i] != '\0'; ++i) {
    unsigned v;
    std::sscanf(h + 2 * i, "%2x", &v);
    out[i] = static_cast<uint8_t>(v);
  }
}

// Master key 00 01 02 ... 1f with id 7, active, and key 0 beside it.
const char kKeyFile[] =
    "# test keys\n"
    "0 "
    "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100\n"
    "7 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f active  # current\n";

sf::MaskKeySet parse_ok(const std::string &text) {
  sf::MaskKeySet set;
  char problem[200];
  EXPECT_TRUE(sf::parse_mask_keys(text.data(), text.size(), &set, problem, sizeof problem))
      << problem;
  return set;
}

std::string parse_problem(const std::string &text) {
  sf::MaskKeySet set;
  char problem[200] = "";
  EXPECT_FALSE(sf::parse_mask_keys(text.data(), text.size(), &set, problem, sizeof problem));
  EXPECT_EQ(set.count, 0);
  return problem;
}

std::string mask(sf::MaskKeyring &ring, int64_t id, const std::string &prefix) {
  uint8_t body[16];
  EXPECT_TRUE(ring.mask_bigint(id, prefix.data(), prefix.size(), body));
  char out[sf::kMaskTokenMax];
  return std::string(out, sf::format_mask_token(prefix.data(), prefix.size(), body, out));
}

sf::TokenParse unmask(sf::MaskKeyring &ring, const std::string &token, int64_t *id,
                      int *key_id = nullptr, std::string *prefix_out = nullptr) {
  char prefix[sf::kMaskPrefixMax + 1];
  size_t plen = 0;
  uint8_t body[16];
  const sf::TokenParse p = sf::split_mask_token(token.data(), token.size(), prefix, &plen, body);
  if (p != sf::TokenParse::kOk) return p;
  if (prefix_out != nullptr) *prefix_out = std::string(prefix, plen);
  int kid = -1;
  const sf::TokenParse r = ring.unmask_bigint(body, prefix, plen, id, &kid);
  if (key_id != nullptr) *key_id = kid;
  return r;
}

}  // namespace

// FIPS-197, appendix C.3: AES-256.
TEST(MaskVectors, Aes256Fips197) {
  uint8_t key[32], pt[16], ct[16], back[16];
  unhex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", key);
  unhex("00112233445566778899aabbccddeeff", pt);
  ASSERT_TRUE(sf::aes256_block(key, pt, ct, false));
  EXPECT_EQ(hex(ct, 16), "8ea2b7ca516745bfeafc49904b496089");
  ASSERT_TRUE(sf::aes256_block(key, ct, back, true));
  EXPECT_EQ(hex(back, 16), "00112233445566778899aabbccddeeff");
}

// The SipHash paper's reference vectors (key 00..0f, messages 00, 00 01, ...), as uuidv47's
// tests give them for lengths 0 to 12, and the 64-byte one.
TEST(MaskVectors, SipHash24Reference) {
  const char *expected[] = {"310e0edd47db6f72", "fd67dc93c539f874", "5a4fa9d909806c0d",
                            "2d7efbd796666785", "b7877127e09427cf", "8da699cd64557618",
                            "cee3fe586e46c9cb", "37d1018bf50002ab", "6224939a79f5f593",
                            "b0e4a90bdf82009e", "f3b9dd94c5bb5d7a", "a7ad6b22462fb3f4",
                            "fbe50e86bc8f1e75"};
  uint8_t msg[64];
  for (int i = 0; i < 64; ++i) msg[i] = static_cast<uint8_t>(i);
  for (size_t len = 0; len < 13; ++len) {
    const uint64_t h = sf::siphash24(msg, len, 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL);
    uint8_t le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(h >> (8 * i));
    EXPECT_EQ(hex(le, 8), expected[len]) << "length " << len;
  }
  // The paper's appendix A: the 15-byte message 00..0e gives a129ca6149be45e5.
  EXPECT_EQ(sf::siphash24(msg, 15, 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL),
            0xa129ca6149be45e5ULL);
}

// uuidv47's façade: the bytes its reference implementation (uuidv47.h, commit 81ba63f of
// github.com/stateless-me/uuidv47) gives for its example key and its tests' SipHash key, and
// back. Keys as uuidv47 takes them: k0 and k1, each read little endian from 8 bytes.
TEST(MaskVectors, Uuidv47ReferenceOutputs) {
  struct Vector {
    uint64_t k0, k1;
    const char *v7, *facade;
  };
  const Vector vectors[] = {
      {0x0123456789abcdefULL, 0xfedcba9876543210ULL, "018f2d9f9a2a7def8c3f7b1a2c4d5e6f",
       "2463c7807fca4def8c3f7b1a2c4d5e6f"},
      {0x0123456789abcdefULL, 0xfedcba9876543210ULL, "00000000000070008000000000000000",
       "22d97126960940008000000000000000"},
      {0x0123456789abcdefULL, 0xfedcba9876543210ULL, "0190a1b2c3d47e5f8a9b0c1d2e3f4051",
       "ec328abb07ff4e5f8a9b0c1d2e3f4051"},
      {0x0123456789abcdefULL, 0xfedcba9876543210ULL, "ffffffffffff7fffbfffffffffffffff",
       "92e2af2bee164fffbfffffffffffffff"},
      {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL, "018f2d9f9a2a7def8c3f7b1a2c4d5e6f",
       "399714620f9f4def8c3f7b1a2c4d5e6f"},
      {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL, "00000000000070008000000000000000",
       "d2d1776f12b140008000000000000000"},
      {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL, "0190a1b2c3d47e5f8a9b0c1d2e3f4051",
       "ac5703c9a8ed4e5f8a9b0c1d2e3f4051"},
      {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL, "ffffffffffff7fffbfffffffffffffff",
       "4b879cd94b5a4fffbfffffffffffffff"},
  };
  for (const Vector &v : vectors) {
    uint8_t key[16], u[16], f[16], back[16];
    for (int i = 0; i < 8; ++i) {
      key[i] = static_cast<uint8_t>(v.k0 >> (8 * i));
      key[8 + i] = static_cast<uint8_t>(v.k1 >> (8 * i));
    }
    unhex(v.v7, u);
    sf::uuidv47_encode(u, key, f);
    EXPECT_EQ(hex(f, 16), v.facade);
    sf::uuidv47_decode(f, key, back);
    EXPECT_EQ(hex(back, 16), v.v7);
  }
  // Any UUIDv7 comes back from its façade, which is version 4 with the variant kept.
  std::mt19937_64 rng(47);
  for (int n = 0; n < 10000; ++n) {
    uint8_t key[16], u[16], f[16], back[16];
    for (auto &b : key) b = static_cast<uint8_t>(rng());
    for (auto &b : u) b = static_cast<uint8_t>(rng());
    u[6] = static_cast<uint8_t>((u[6] & 0x0f) | 0x70);
    u[8] = static_cast<uint8_t>((u[8] & 0x3f) | 0x80);
    sf::uuidv47_encode(u, key, f);
    ASSERT_EQ(f[6] >> 4, 4);
    ASSERT_EQ(f[8] >> 6, 2);
    ASSERT_TRUE(std::memcmp(f + 7, u + 7, 9) == 0 && (f[6] & 0x0f) == (u[6] & 0x0f));
    sf::uuidv47_decode(f, key, back);
    ASSERT_EQ(hex(back, 16), hex(u, 16));
  }
}

TEST(MaskKeys, ParsesTheDocumentedFormat) {
  const sf::MaskKeySet set = parse_ok(kKeyFile);
  EXPECT_EQ(set.count, 2);
  EXPECT_EQ(set.active, 7);
  EXPECT_EQ(set.entries[1].id, 7);
  EXPECT_EQ(hex(set.entries[1].key, 32),
            "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  // What `openssl rand -hex 32` prints, upper case too, and tabs.
  EXPECT_EQ(
      parse_ok("255\tABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789\tactive")
          .active,
      255);
}

TEST(MaskKeys, ProblemsNameTheLineAndNeverTheKey) {
  const std::string k = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
  EXPECT_EQ(parse_problem(""), "the file holds no key (a line is: ID HEX active)");
  EXPECT_EQ(parse_problem("# nothing\n\n"), "the file holds no key (a line is: ID HEX active)");
  EXPECT_EQ(parse_problem("1 " + k + "\n"),
            "no key is marked active (add the word active after one key)");
  EXPECT_EQ(parse_problem("1 " + k + " active\n2 " + k + " active\n"),
            "line 2: line 1 is marked active too: mark one key");
  EXPECT_EQ(parse_problem("1 " + k + " active\n1 " + k + "\n"),
            "line 2: key id 1 is also on line 1");
  EXPECT_EQ(parse_problem("256 " + k + " active\n"),
            "line 1: the key id is not a number from 0 to 255");
  EXPECT_EQ(parse_problem("-1 " + k + " active\n"),
            "line 1: the key id is not a number from 0 to 255");
  EXPECT_EQ(parse_problem("1 " + k.substr(2) + " active\n"),
            "line 1: the key is not 64 hex digits (256 bits)");
  EXPECT_EQ(parse_problem("1 " + k.substr(1) + "g active\n"),
            "line 1: the key is not 64 hex digits (256 bits)");
  EXPECT_EQ(parse_problem("1\n"), "line 1: no key after the key id");
  EXPECT_EQ(parse_problem("1 " + k + " current\n"),
            "line 1: after the key, only the word active may follow");
  EXPECT_EQ(parse_problem("1 " + k + " active yes\n"),
            "line 1: after the word active, nothing may follow");
}

// Known answers, computed independently with openssl's command line and given in
// docs/internals.md: master key 00..1f (id 7, then id 0), K = its hex;
//   HMAC:  printf %s LABEL | openssl dgst -sha256 -mac HMAC -macopt hexkey:KEY
//   AES:   printf BLOCK | xxd -r -p | openssl enc -aes-256-ecb -nopad -K KEY
// the prefix key HMAC(K, "snowflake mask bigint prefix v1") = 90bd0004...fbfeb9ba; the check
// its HMAC of the prefix, first 7 bytes: "" d74f2ad8ff46f6, "ord" f20c6648abf727, "user"
// 3b27b1f2b5f1eb; the block ID (8 bytes, big endian) ‖ key id ‖ check, e.g.
// 00000000000004d2 07 f20c6648abf727, under HMAC(K, "snowflake mask bigint v1"), in base32.
TEST(MaskToken, KnownAnswers) {
  sf::MaskKeyring ring;
  ring.reset(parse_ok(kKeyFile));
  EXPECT_EQ(mask(ring, 1234, ""), "2nyycqrb8qy0c3y64bpxpfwaj8");
  EXPECT_EQ(mask(ring, 1234, "ord"), "ord_7672ppc9b813scngte31j6w6er");
  sf::MaskKeySet zero =
      parse_ok("0 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f active");
  sf::MaskKeyring ring0;
  ring0.reset(zero);
  EXPECT_EQ(mask(ring0, -1, "user"), "user_0t05wzhhgq2vh15pypt6hs8aaa");

  uint8_t prefix_key[32];
  ASSERT_TRUE(sf::derive_mask_key(zero.entries[0].key, sf::MaskUse::kBigintPrefix, prefix_key));
  EXPECT_EQ(hex(prefix_key, 32),
            "90bd00047346e937a25b8dc84e2ebf9414a67fa23305a040c67ad837fbfeb9ba");
  EXPECT_STREQ(sf::mask_label(sf::MaskUse::kBigintPrefix), "snowflake mask bigint prefix v1");
  sf::MaskCheck check;
  ASSERT_TRUE(sf::mask_prefix_mac(prefix_key, "", 0, &check));
  EXPECT_EQ(hex(check.bytes, 7), "d74f2ad8ff46f6");
  ASSERT_TRUE(sf::mask_prefix_mac(prefix_key, "ord", 3, &check));
  EXPECT_EQ(hex(check.bytes, 7), "f20c6648abf727");

  uint8_t derived[32];
  ASSERT_TRUE(sf::derive_mask_key(zero.entries[0].key, sf::MaskUse::kUuid, derived));
  EXPECT_EQ(hex(derived, 16), "d4d640344c12446eebde2c5b12e43154");
  uint8_t u[16], m[16], back[16];
  unhex("0190a1b2c3d47e5f8a9b0c1d2e3f4051", u);
  ASSERT_TRUE(ring0.ulid_mask(0, u, m, false));
  EXPECT_EQ(hex(m, 16), "49f49c0412d685a5437db77348deff05");
  ASSERT_TRUE(ring0.ulid_mask(0, m, back, true));
  EXPECT_EQ(hex(back, 16), hex(u, 16));
}

// The fingerprint that snowflake_status() shows: known answers (Python's hmac and hashlib),
// another for a file that differs only in a retired key (which still unmasks old tokens on
// that server), in which key is active, or in a key's id; none without keys; no derived key.
TEST(MaskToken, FingerprintNamesEveryKeyOfTheFileAndNoDerivedKey) {
  sf::MaskKeyring ring;
  char fp[17];
  EXPECT_FALSE(ring.fingerprint(fp));
  EXPECT_STREQ(fp, "");
  ring.reset(parse_ok(kKeyFile));
  ASSERT_TRUE(ring.fingerprint(fp));
  EXPECT_STREQ(fp, "55a2455d4ba92c8d");
  const std::string key7 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
  const std::string key0 = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
  struct {
    const char *what;
    std::string file;
    const char *expected;
  } const others[] = {
      {"the active key alone", "7 " + key7 + " active\n", "3927f8e74db9cbac"},
      {"another retired key",
       "0 1111111111111111222222222222222233333333333333334444444444444444\n7 " + key7 +
           " active\n",
       "4aa144574d4a676c"},
      {"the other key active", "0 " + key0 + " active\n7 " + key7 + "\n", "5ef46c282fd7601e"},
  };
  for (const auto &o : others) {
    sf::MaskKeyring other;
    other.reset(parse_ok(o.file));
    char ofp[17];
    ASSERT_TRUE(other.fingerprint(ofp)) << o.what;
    EXPECT_STREQ(ofp, o.expected) << o.what;
    EXPECT_STRNE(ofp, fp) << o.what;
  }
  // The same keys under swapped ids.
  sf::MaskKeyring swapped;
  swapped.reset(parse_ok("0 " + key7 + " active\n7 " + key0 + "\n"));
  char sfp[17];
  ASSERT_TRUE(swapped.fingerprint(sfp));
  EXPECT_STRNE(sfp, fp);
  // The same file again, comments and order aside, gives the same one.
  sf::MaskKeyring same;
  same.reset(parse_ok("7 " + key7 + " active\n0 " + key0 + "\n"));
  ASSERT_TRUE(same.fingerprint(sfp));
  EXPECT_STREQ(sfp, fp);
  // No derived key begins with it.
  const sf::MaskKeySet set = parse_ok(kKeyFile);
  for (sf::MaskUse use :
       {sf::MaskUse::kBigint, sf::MaskUse::kUlid, sf::MaskUse::kUuid, sf::MaskUse::kUuidv7}) {
    uint8_t k[32];
    ASSERT_TRUE(sf::derive_mask_key(set.entries[1].key, use, k));
    EXPECT_NE(hex(k, 8), fp);
  }
}

TEST(MaskToken, RoundTripsEqualIdsEqualTokensAnyCase) {
  sf::MaskKeyring ring;
  ring.reset(parse_ok(kKeyFile));
  std::mt19937_64 rng(1);
  for (int n = 0; n < 20000; ++n) {
    const int64_t id =
        n < 4 ? (int64_t[]){0, 1, INT64_MAX, INT64_MIN}[n] : static_cast<int64_t>(rng());
    const std::string prefix = n % 2 ? "ord" : "";
    const std::string t = mask(ring, id, prefix);
    ASSERT_EQ(t.size(), prefix.empty() ? 26u : 30u);
    ASSERT_EQ(mask(ring, id, prefix), t);
    int64_t back = 0;
    int kid = -1;
    std::string p;
    ASSERT_EQ(unmask(ring, t, &back, &kid, &p), sf::TokenParse::kOk);
    ASSERT_EQ(back, id);
    EXPECT_EQ(kid, 7);
    EXPECT_EQ(p, prefix);
    std::string upper = t;
    for (char &c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    ASSERT_EQ(unmask(ring, upper, &back), sf::TokenParse::kOk);
    ASSERT_EQ(back, id);
  }
  // Consecutive IDs give tokens with nothing in common to read: no shared leading characters
  // beyond chance (base32: 1 in 32 per character).
  int shared = 0;
  for (int64_t id = 1000; id < 2000; ++id) {
    shared += mask(ring, id, "")[1] == mask(ring, id + 1, "")[1];
  }
  EXPECT_LT(shared, 100);
}

TEST(MaskToken, ChangedTokensAreRejected) {
  sf::MaskKeyring ring;
  ring.reset(parse_ok(kKeyFile));
  static const char alphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";
  std::mt19937_64 rng(2);
  for (int n = 0; n < 2000; ++n) {
    const std::string t = mask(ring, static_cast<int64_t>(rng()), "ord");
    for (size_t i = 4; i < t.size(); ++i) {
      std::string c = t;
      do c[i] = alphabet[rng() % 32];
      while (c[i] == t[i]);
      int64_t id;
      const sf::TokenParse r = unmask(ring, c, &id);
      ASSERT_TRUE(r == sf::TokenParse::kNotAuthentic || r == sf::TokenParse::kOverflow) << c;
    }
  }
  int64_t id;
  const std::string t = mask(ring, 42, "ord");
  // Another prefix, none, a cut or a longer token, a bad character.
  EXPECT_EQ(unmask(ring, "user" + t.substr(3), &id), sf::TokenParse::kNotAuthentic);
  EXPECT_EQ(unmask(ring, t.substr(4), &id), sf::TokenParse::kNotAuthentic);
  EXPECT_EQ(unmask(ring, t.substr(0, t.size() - 1), &id), sf::TokenParse::kBadLength);
  EXPECT_EQ(unmask(ring, t + "0", &id), sf::TokenParse::kBadLength);
  EXPECT_EQ(unmask(ring, t.substr(0, 10) + "u" + t.substr(11), &id), sf::TokenParse::kBadCharacter);
  EXPECT_EQ(unmask(ring, "_" + t.substr(4), &id), sf::TokenParse::kBadPrefix);
  EXPECT_EQ(unmask(ring, "or-d" + t.substr(3), &id), sf::TokenParse::kBadPrefix);
  EXPECT_EQ(unmask(ring, "8" + t.substr(5), &id), sf::TokenParse::kOverflow);
}

// One million random strings of a token's length and alphabet: a forgery succeeds with
// probability 2^-64 per key tried, so none may pass.
TEST(MaskToken, MillionRandomTokensAreRejected) {
  sf::MaskKeyring ring;
  ring.reset(parse_ok(kKeyFile));
  static const char alphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";
  std::mt19937_64 rng(3);
  int accepted = 0;
  for (int n = 0; n < 1000000; ++n) {
    std::string t(26, '0');
    t[0] = alphabet[rng() % 8];
    for (size_t i = 1; i < 26; ++i) t[i] = alphabet[rng() % 32];
    int64_t id;
    const sf::TokenParse r = unmask(ring, n % 2 ? t : "ord_" + t, &id);
    ASSERT_TRUE(r == sf::TokenParse::kNotAuthentic || r == sf::TokenParse::kOk);
    accepted += r == sf::TokenParse::kOk;
  }
  EXPECT_EQ(accepted, 0);
}

TEST(MaskToken, OldTokensUnmaskAfterRotation) {
  const std::string k0 = "0 ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
  const std::string k1 = "1 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
  sf::MaskKeyring ring;
  ring.reset(parse_ok(k0 + " active\n"));
  const std::string before = mask(ring, 99, "ord");
  ring.reset(parse_ok(k0 + "\n" + k1 + " active\n"));
  EXPECT_EQ(ring.active_id(), 1);
  const std::string after = mask(ring, 99, "ord");
  EXPECT_NE(before, after);
  int64_t id = 0;
  int kid = -1;
  EXPECT_EQ(unmask(ring, before, &id, &kid), sf::TokenParse::kOk);
  EXPECT_EQ(id, 99);
  EXPECT_EQ(kid, 0);
  EXPECT_EQ(unmask(ring, after, &id, &kid), sf::TokenParse::kOk);
  EXPECT_EQ(kid, 1);
  // The old key retired: its tokens are refused.
  ring.reset(parse_ok(k1 + " active\n"));
  EXPECT_EQ(unmask(ring, before, &id), sf::TokenParse::kNotAuthentic);
  EXPECT_EQ(unmask(ring, after, &id), sf::TokenParse::kOk);
}

TEST(MaskPrefix, TypeIdRules) {
  EXPECT_EQ(sf::check_mask_prefix("ord", 3), sf::MaskPrefix::kOk);
  EXPECT_EQ(sf::check_mask_prefix("line_item", 9), sf::MaskPrefix::kOk);
  EXPECT_EQ(sf::check_mask_prefix("", 0), sf::MaskPrefix::kOk);
  EXPECT_EQ(sf::check_mask_prefix("Ord", 3), sf::MaskPrefix::kBadCharacter);
  EXPECT_EQ(sf::check_mask_prefix("ord1", 4), sf::MaskPrefix::kBadCharacter);
  EXPECT_EQ(sf::check_mask_prefix("_ord", 4), sf::MaskPrefix::kUnderscoreAtEnd);
  EXPECT_EQ(sf::check_mask_prefix("ord_", 4), sf::MaskPrefix::kUnderscoreAtEnd);
  const std::string longest(63, 'a');
  EXPECT_EQ(sf::check_mask_prefix(longest.data(), 63), sf::MaskPrefix::kOk);
  EXPECT_EQ(sf::check_mask_prefix((longest + "a").data(), 64), sf::MaskPrefix::kTooLong);
}

TEST(MaskKeys, RefusesKeysNobodyMayUse) {
  EXPECT_EQ(parse_problem("1 " + std::string(64, '0') + " active\n"),
            "line 1: this key is all zeros or the README's example: make one with "
            "snowflake_mask_key new");
  EXPECT_EQ(parse_problem("0 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
                          "1 6F3A1E0B9C2D4F5A7E8B1C3D5F7A9B0C2E4D6F8A1B3C5D7E9F0A2B4C6D8E0F1A "
                          "active\n"),
            "line 2: this key is all zeros or the README's example: make one with "
            "snowflake_mask_key new");
}

TEST(MaskKeys, WarnsOfOneKeyUnderTwoIds) {
  const std::string k = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
  EXPECT_STREQ(parse_ok(kKeyFile).warning, "");
  const sf::MaskKeySet set = parse_ok("1 " + k + "\n# again\n4 " + k + " active\n");
  EXPECT_EQ(set.count, 2);
  EXPECT_STREQ(set.warning, "line 3: key id 4 holds the same key as key id 1");
}

namespace {

std::string read_problem(const std::string &path, bool *ok) {
  char buf[64], problem[200] = "";
  size_t len = 0;
  *ok = sf::read_mask_key_file(path.c_str(), buf, sizeof buf, &len, problem, sizeof problem);
  return problem;
}

}  // namespace

// A FIFO at the path must not block whoever reads the file (the postmaster, at a reload):
// the read is bounded here by a thread, which the test unblocks itself if it has to.
TEST(MaskKeys, KeyFileIsARegularFileNeverAFifoOrALink) {
  char dir[] = "/tmp/mask_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/fifo", file = std::string(dir) + "/keys",
                    link = std::string(dir) + "/link";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::promise<std::string> done;
  std::future<std::string> result = done.get_future();
  std::thread reader([&] {
    bool ok = true;
    std::string p = read_problem(fifo, &ok);
    done.set_value(ok ? "read" : p);
  });
  const bool in_time = result.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!in_time) {
    const int fd = open(fifo.c_str(), O_WRONLY);  // lets the blocked open return
    close(fd);
  }
  reader.join();
  EXPECT_TRUE(in_time) << "reading a FIFO blocked";
  EXPECT_EQ(result.get(), "\"" + fifo + "\" is not a regular file");

  const int fd = open(file.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "1 x active\n", 11), 11);
  close(fd);
  bool ok = false;
  EXPECT_EQ(read_problem(file, &ok), "");
  EXPECT_TRUE(ok);
  ASSERT_EQ(symlink(file.c_str(), link.c_str()), 0);
  EXPECT_EQ(read_problem(link, &ok), "\"" + link + "\" is a symbolic link: name the file itself");
  EXPECT_FALSE(ok);
  ASSERT_EQ(chmod(file.c_str(), 0644), 0);
  EXPECT_EQ(
      read_problem(file, &ok),
      "\"" + file + "\" may be read by others: it must be mode 0600 (or 0640 when owned by root)");
  EXPECT_FALSE(ok);
  unlink(link.c_str());
  unlink(file.c_str());
  unlink(fifo.c_str());
  rmdir(dir);
}

// Every key is tried, whichever made the token: the time taken does not tell whether a token
// predates a rotation.
TEST(MaskToken, EveryKeyIsTried) {
  const std::string k = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1";
  sf::MaskKeyring ring;
  ring.reset(parse_ok("3 " + k + "0\n5 " + k + "1 active\n9 " + k + "2\n"));
  int64_t id = 0;
  int kid = -1;
  const std::string t = mask(ring, 77, "ord");
  const uint64_t before = ring.blocks_deciphered();
  ASSERT_EQ(unmask(ring, t, &id, &kid), sf::TokenParse::kOk);
  EXPECT_EQ(id, 77);
  EXPECT_EQ(kid, 5);
  EXPECT_EQ(ring.blocks_deciphered() - before, 3u) << "the active key's token";
  ASSERT_EQ(unmask(ring, "ord_" + std::string(26, '0'), &id), sf::TokenParse::kNotAuthentic);
  EXPECT_EQ(ring.blocks_deciphered() - before, 6u) << "a token no key made";
}

// A block that deciphers under a key but names another key id, or carries check bytes that
// differ from the prefix's in any one bit, is refused: the tag is the id and all 7 bytes.
TEST(MaskToken, WrongKeyIdOrCheckBytesAreRefused) {
  const sf::MaskKeySet set = parse_ok(kKeyFile);
  sf::MaskKeyring ring;
  ring.reset(set);
  uint8_t aes[32];
  ASSERT_TRUE(sf::derive_mask_key(set.entries[1].key, sf::MaskUse::kBigint, aes));  // id 7
  uint8_t prefix_key[32];
  ASSERT_TRUE(sf::derive_mask_key(set.entries[1].key, sf::MaskUse::kBigintPrefix, prefix_key));
  sf::MaskCheck check;
  ASSERT_TRUE(sf::mask_prefix_mac(prefix_key, "ord", 3, &check));
  auto token_of = [&](const uint8_t block[16]) {
    uint8_t body[16];
    EXPECT_TRUE(sf::aes256_block(aes, block, body, false));
    char out[sf::kMaskTokenMax];
    return std::string(out, sf::format_mask_token("ord", 3, body, out));
  };
  uint8_t block[16] = {0, 0, 0, 0, 0, 0, 0, 42, 7};
  std::memcpy(block + 9, check.bytes, sf::kMaskCheckLen);
  int64_t id = 0;
  ASSERT_EQ(unmask(ring, token_of(block), &id), sf::TokenParse::kOk);
  EXPECT_EQ(id, 42);
  for (int other = 0; other < 256; ++other) {
    if (other == 7) continue;
    block[8] = static_cast<uint8_t>(other);
    EXPECT_EQ(unmask(ring, token_of(block), &id), sf::TokenParse::kNotAuthentic) << other;
  }
  block[8] = 7;
  for (int bit = 0; bit < 8 * static_cast<int>(sf::kMaskCheckLen); ++bit) {
    block[9 + bit / 8] ^= static_cast<uint8_t>(1 << (bit % 8));
    EXPECT_EQ(unmask(ring, token_of(block), &id), sf::TokenParse::kNotAuthentic) << bit;
    block[9 + bit / 8] ^= static_cast<uint8_t>(1 << (bit % 8));
  }
}

// uuidv7_mask()'s façade: an exact inverse, version 4 with the variant kept, rand_b kept, and
// neither the time nor rand_a (snowflake_uuidv7()'s counter) readable: the façades of one
// millisecond's 4,096 UUIDs, counters 0 to 4095, show no run and no common time.
// The known answer is test/drivers/mask_client.py's (key 00..0f).
TEST(MaskVectors, Uuidv7FacadeHidesTimeAndCounter) {
  uint8_t key[16];
  for (int i = 0; i < 16; ++i) key[i] = static_cast<uint8_t>(i);
  uint8_t u[16], f[16], back[16];
  unhex("0190a1b2c3d47e5f8a9b0c1d2e3f4051", u);
  sf::uuidv7_facade_encode(u, key, f);
  EXPECT_EQ(hex(f, 16), "a484994e78f1406b8a9b0c1d2e3f4051");
  sf::uuidv7_facade_decode(f, key, back);
  EXPECT_EQ(hex(back, 16), hex(u, 16));

  std::mt19937_64 rng(7);
  int runs = 0, same_time = 0, prev_a = -1;
  uint8_t prev_time[6] = {};
  for (int counter = 0; counter < 4096; ++counter) {
    for (auto &b : u) b = static_cast<uint8_t>(rng());
    std::memcpy(u, "\x01\x90\xa1\xb2\xc3\xd4", 6);
    u[6] = static_cast<uint8_t>(0x70 | counter >> 8);
    u[7] = static_cast<uint8_t>(counter);
    u[8] = static_cast<uint8_t>((u[8] & 0x3f) | 0x80);
    sf::uuidv7_facade_encode(u, key, f);
    ASSERT_EQ(f[6] >> 4, 4);
    ASSERT_EQ(f[8] >> 6, 2);
    ASSERT_EQ(std::memcmp(f + 8, u + 8, 8), 0);
    const int a = (f[6] & 0x0f) << 8 | f[7];
    runs += a == prev_a + 1;
    same_time += std::memcmp(f, prev_time, 6) == 0;
    prev_a = a;
    std::memcpy(prev_time, f, 6);
    sf::uuidv7_facade_decode(f, key, back);
    ASSERT_EQ(hex(back, 16), hex(u, 16));
  }
  EXPECT_LT(runs, 10);  // 1 in 4096 by chance: about 1
  EXPECT_EQ(same_time, 0);
}

namespace {

struct Mapping {
  uintptr_t begin, end;
  bool dontdump;
};

// This process's readable mappings but the stack (where the test keeps its own copies, and
// where dead frames may hold more), with whether each is left out of core dumps.
std::vector<Mapping> mappings() {
  std::vector<Mapping> out;
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  while (std::getline(smaps, line)) {
    unsigned long b, e;
    char perms[5];
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &b, &e, perms) == 3 && line.find(':') > 8) {
      if (perms[0] == 'r' && line.find("[vvar") == std::string::npos &&
          line.find("[vsyscall]") == std::string::npos && line.find("[stack]") == std::string::npos)
        out.push_back({b, e, false});
    } else if (line.rfind("VmFlags:", 0) == 0 && !out.empty() && out.back().end == e) {
      out.back().dontdump = line.find(" dd") != std::string::npos;
    }
  }
  return out;
}

// Where the bytes occur in this process's memory: how many copies in mappings a core dump
// holds, and how many in all. Each mapping is read into a buffer mapped for it alone, which
// is not among the mappings read.
std::pair<int, int> copies(const uint8_t *needle, size_t len) {
  std::pair<int, int> n{0, 0};
  const int fd = open("/proc/self/mem", O_RDONLY);
  EXPECT_GE(fd, 0);
  for (const Mapping &m : mappings()) {
    const size_t size = m.end - m.begin;
    void *map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) continue;
    const uint8_t *buf = static_cast<const uint8_t *>(map);
    const ssize_t got = pread(fd, map, size, static_cast<off_t>(m.begin));
    for (const uint8_t *p = buf; got > 0 && p + len <= buf + got; ++p) {
      p = static_cast<const uint8_t *>(std::memchr(p, needle[0], buf + got - p));
      if (p == nullptr || p + len > buf + got) break;
      if (std::memcmp(p, needle, len) == 0) {
        n.first += !m.dontdump;
        ++n.second;
      }
    }
    munmap(map, size);
  }
  close(fd);
  return n;
}

}  // namespace

// Master keys and the façades' keys live only in memory the keyring owns, left out of core
// dumps, and are wiped when replaced.
TEST(MaskMemory, KeysOnlyInMemoryLeftOutOfCoreDumpsAndWipedWhenReplaced) {
  std::random_device rd;
  // The scan itself, first: a marker on the heap is found once, and a page marked
  // MADV_DONTDUMP is reported so (qemu-user, which runs the arm64 build, emulates neither).
  {
    auto marker = std::make_unique<uint8_t[]>(32);
    for (int i = 0; i < 32; ++i) marker[i] = static_cast<uint8_t>(rd());
    void *page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(page, MAP_FAILED);
    ASSERT_EQ(madvise(page, 4096, MADV_DONTDUMP), 0);
    std::memcpy(page, marker.get(), 32);
    const auto seen = copies(marker.get(), 32);
    munmap(page, 4096);
    if (seen != std::make_pair(1, 2)) {
      GTEST_SKIP() << "this process's memory cannot be scanned here (found " << seen.first
                   << " dumped and " << seen.second << " copies of a marker, not 1 and 2)";
    }
  }
  auto set = std::make_unique<sf::MaskKeySet>();
  set->count = 2;
  set->active = 4;
  uint8_t master[2][32], derived[2][32];
  for (int i = 0; i < 2; ++i) {
    set->entries[i].id = static_cast<uint8_t>(3 + i);
    for (auto &b : set->entries[i].key) b = static_cast<uint8_t>(rd());
    std::memcpy(master[i], set->entries[i].key, 32);
  }
  ASSERT_TRUE(sf::derive_mask_key(master[1], sf::MaskUse::kUuidv7, derived[0]));
  ASSERT_TRUE(sf::derive_mask_key(master[1], sf::MaskUse::kUuid, derived[1]));
  sf::MaskKeyring ring;
  ring.reset(*set);
  OPENSSL_cleanse(set.get(), sizeof *set);
  uint8_t u[16] = {1, 2, 3, 4, 5, 6, 0x70, 0, 0x80}, f[16];
  ASSERT_TRUE(ring.uuid_mask(4, sf::MaskKeyring::Facade::kUuidv7, u, f, false));
  ASSERT_TRUE(ring.uuid_mask(4, sf::MaskKeyring::Facade::kUuidv47, u, f, false));
  // One copy of each, the keyring's, out of core dumps.
  for (int i = 0; i < 2; ++i) {
    const auto m = copies(master[i], 32);
    EXPECT_EQ(m.first, 0) << "master key " << i << " in memory a core dump holds";
    EXPECT_EQ(m.second, 1) << "master key " << i;
    const auto d = copies(derived[i], 16);
    EXPECT_EQ(d.first, 0) << "façade key " << i << " in memory a core dump holds";
    EXPECT_EQ(d.second, 1) << "façade key " << i;
  }
  // Replaced by other keys: no copy left.
  set->count = 1;
  set->active = 9;
  set->entries[0].id = 9;
  for (auto &b : set->entries[0].key) b = static_cast<uint8_t>(rd());
  ring.reset(*set);
  ASSERT_TRUE(ring.uuid_mask(9, sf::MaskKeyring::Facade::kUuidv7, u, f, false));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(copies(master[i], 32).second, 0) << "master key " << i << " after reset";
    EXPECT_EQ(copies(derived[i], 16).second, 0) << "façade key " << i << " after reset";
  }
}

namespace {

std::string mask_sno(sf::MaskKeyring &ring, const uint8_t id[10], const std::string &prefix) {
  uint8_t body[16];
  EXPECT_TRUE(ring.mask_sno(id, prefix.data(), prefix.size(), body));
  char out[sf::kMaskTokenMax];
  return std::string(out, sf::format_mask_token(prefix.data(), prefix.size(), body, out));
}

sf::TokenParse unmask_sno(sf::MaskKeyring &ring, const std::string &token, uint8_t id[10],
                          int *key_id = nullptr) {
  char prefix[sf::kMaskPrefixMax + 1];
  size_t plen = 0;
  uint8_t body[16];
  const sf::TokenParse p = sf::split_mask_token(token.data(), token.size(), prefix, &plen, body);
  if (p != sf::TokenParse::kOk) return p;
  int kid = -1;
  const sf::TokenParse r = ring.unmask_sno(body, prefix, plen, id, &kid);
  if (key_id != nullptr) *key_id = kid;
  return r;
}

}  // namespace

// sno_mask()'s token, checked independently (docs/internals.md#masking): master key 00..1f,
// id 7; the derived key is HMAC-SHA256(master, "snowflake mask sno v1") =
// 23f6a26f924be2ac9a8471bed5bfb8cf14c10876d35f9057f7041410c048cf3d; the prefix key
// HMAC-SHA256(master, "snowflake mask sno prefix v1") =
// 314cd188fc7360763770092c915e444f36e0a7d0e490c65766a9b86b73872b31; the block is the sno's
// 10 bytes, the key id and the first 5 bytes of HMAC-SHA256(prefix key, prefix):
//   ""    -> 0123456789abcdef0123 07 b1426d8139
//   "ord" -> 0123456789abcdef0123 07 23f966bb82
// (printf %s ord | openssl dgst -sha256 -mac HMAC -macopt hexkey:<prefix key>);
// printf <block> | xxd -r -p | openssl enc -aes-256-ecb -nopad -K <derived key>, in Crockford
// base32 (two zero bits first), gives the tokens below.
TEST(MaskSno, KnownAnswers) {
  sf::MaskKeyring ring;
  ring.reset(parse_ok(kKeyFile));
  uint8_t id[10];
  unhex("0123456789abcdef0123", id);
  EXPECT_EQ(mask_sno(ring, id, ""), "11qr49kev0swky1w4k6ecsnex8");
  EXPECT_EQ(mask_sno(ring, id, "ord"), "ord_14see1s003xx2aq0bpt465tsv9");
  uint8_t derived[32];
  ASSERT_TRUE(sf::derive_mask_key(parse_ok(kKeyFile).entries[1].key, sf::MaskUse::kSno, derived));
  EXPECT_EQ(hex(derived, 32), "23f6a26f924be2ac9a8471bed5bfb8cf14c10876d35f9057f7041410c048cf3d");
  EXPECT_STREQ(sf::mask_label(sf::MaskUse::kSno), "snowflake mask sno v1");
  ASSERT_TRUE(
      sf::derive_mask_key(parse_ok(kKeyFile).entries[1].key, sf::MaskUse::kSnoPrefix, derived));
  EXPECT_EQ(hex(derived, 32), "314cd188fc7360763770092c915e444f36e0a7d0e490c65766a9b86b73872b31");
  EXPECT_STREQ(sf::mask_label(sf::MaskUse::kSnoPrefix), "snowflake mask sno prefix v1");
  sf::MaskCheck check;
  ASSERT_TRUE(sf::mask_prefix_mac(derived, "ord", 3, &check));
  EXPECT_EQ(hex(check.bytes, 5), "23f966bb82");
  uint8_t back[10];
  int kid = -1;
  ASSERT_EQ(unmask_sno(ring, "ORD_14SEE1S003XX2AQ0BPT465TSV9", back, &kid), sf::TokenParse::kOk);
  EXPECT_EQ(hex(back, 10), "0123456789abcdef0123");
  EXPECT_EQ(kid, 7);
}

TEST(MaskSno, RoundTripsAndRotation) {
  sf::MaskKeyring ring;
  ring.reset(parse_ok(kKeyFile));
  std::mt19937_64 rng(5);
  for (int n = 0; n < 5000; ++n) {
    uint8_t id[10], back[10];
    for (uint8_t &b : id) b = static_cast<uint8_t>(rng());
    if (n == 0) std::memset(id, 0, sizeof id);
    if (n == 1) std::memset(id, 0xff, sizeof id);
    const std::string prefix = n % 2 ? "ord" : "";
    const std::string t = mask_sno(ring, id, prefix);
    ASSERT_EQ(t.size(), prefix.empty() ? 26u : 30u);
    ASSERT_EQ(mask_sno(ring, id, prefix), t);
    ASSERT_EQ(unmask_sno(ring, t, back), sf::TokenParse::kOk);
    ASSERT_EQ(hex(back, 10), hex(id, 10));
  }
  // A token made under key 7 still unmasks when key 0 becomes the active one, and not once
  // key 7 is removed.
  uint8_t id[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, back[10];
  const std::string t = mask_sno(ring, id, "ord");
  const std::string k0 = "0 ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
  const std::string k7 = "7 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
  ring.reset(parse_ok(k0 + " active\n" + k7 + "\n"));
  int kid = -1;
  EXPECT_EQ(unmask_sno(ring, t, back, &kid), sf::TokenParse::kOk);
  EXPECT_EQ(kid, 7);
  ring.reset(parse_ok(k0 + " active\n"));
  EXPECT_EQ(unmask_sno(ring, t, back), sf::TokenParse::kNotAuthentic);
}

// Every single-character change of a token, at every position and to every other character of
// the alphabet, is refused; and so is another prefix or none.
TEST(MaskSno, EveryChangedCharacterIsRefused) {
  sf::MaskKeyring ring;
  ring.reset(parse_ok(kKeyFile));
  static const char alphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";
  std::mt19937_64 rng(6);
  for (int n = 0; n < 20; ++n) {
    uint8_t id[10], back[10];
    for (uint8_t &b : id) b = static_cast<uint8_t>(rng());
    const std::string t = mask_sno(ring, id, "ord");
    for (size_t i = 4; i < t.size(); ++i) {
      for (int a = 0; a < 32; ++a) {
        if (alphabet[a] == t[i]) continue;
        std::string c = t;
        c[i] = alphabet[a];
        const sf::TokenParse r = unmask_sno(ring, c, back);
        ASSERT_TRUE(r == sf::TokenParse::kNotAuthentic || r == sf::TokenParse::kOverflow) << c;
      }
    }
    EXPECT_EQ(unmask_sno(ring, "user" + t.substr(3), back), sf::TokenParse::kNotAuthentic);
    EXPECT_EQ(unmask_sno(ring, t.substr(4), back), sf::TokenParse::kNotAuthentic);
  }
  // Random strings of a token's form: a forgery passes 1 time in 2^48 per key tried.
  int accepted = 0;
  for (int n = 0; n < 200000; ++n) {
    std::string t(26, '0');
    t[0] = alphabet[rng() % 8];
    for (size_t i = 1; i < 26; ++i) t[i] = alphabet[rng() % 32];
    uint8_t back[10];
    accepted += unmask_sno(ring, t, back) == sf::TokenParse::kOk;
  }
  EXPECT_EQ(accepted, 0);
}

// A bigint token is not a sno token, nor the other way round, under the same master key, with
// or without a prefix: each kind has its own derived key.
TEST(MaskSno, BigintAndSnoTokensNeverUnmaskAsEachOther) {
  sf::MaskKeyring ring;
  ring.reset(parse_ok(kKeyFile));
  std::mt19937_64 rng(7);
  for (int n = 0; n < 5000; ++n) {
    const std::string prefix = n % 2 ? "ord" : "";
    const int64_t v = static_cast<int64_t>(rng());
    uint8_t id[10], back[10];
    for (uint8_t &b : id) b = static_cast<uint8_t>(rng());
    int64_t got = 0;
    ASSERT_EQ(unmask_sno(ring, mask(ring, v, prefix), back), sf::TokenParse::kNotAuthentic);
    ASSERT_EQ(unmask(ring, mask_sno(ring, id, prefix), &got), sf::TokenParse::kNotAuthentic);
  }
  // Not even a sno block built by hand as the bigint kind's: the derived keys differ.
  uint8_t big[32], sno[32];
  const sf::MaskKeySet set = parse_ok(kKeyFile);
  ASSERT_TRUE(sf::derive_mask_key(set.entries[1].key, sf::MaskUse::kBigint, big));
  ASSERT_TRUE(sf::derive_mask_key(set.entries[1].key, sf::MaskUse::kSno, sno));
  EXPECT_NE(hex(big, 32), hex(sno, 32));
}

// A block that deciphers under the sno key but names another key id, or whose 5 check bytes
// differ from the prefix's in any one bit, is refused.
TEST(MaskSno, WrongKeyIdOrCheckBytesAreRefused) {
  const sf::MaskKeySet set = parse_ok(kKeyFile);
  sf::MaskKeyring ring;
  ring.reset(set);
  uint8_t aes[32];
  ASSERT_TRUE(sf::derive_mask_key(set.entries[1].key, sf::MaskUse::kSno, aes));  // id 7
  uint8_t prefix_key[32];
  ASSERT_TRUE(sf::derive_mask_key(set.entries[1].key, sf::MaskUse::kSnoPrefix, prefix_key));
  sf::MaskCheck check;
  ASSERT_TRUE(sf::mask_prefix_mac(prefix_key, "ord", 3, &check));
  auto token_of = [&](const uint8_t block[16]) {
    uint8_t body[16];
    EXPECT_TRUE(sf::aes256_block(aes, block, body, false));
    char out[sf::kMaskTokenMax];
    return std::string(out, sf::format_mask_token("ord", 3, body, out));
  };
  uint8_t block[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 7};
  std::memcpy(block + 11, check.bytes, sf::kMaskSnoCheckLen);
  uint8_t back[10];
  ASSERT_EQ(unmask_sno(ring, token_of(block), back), sf::TokenParse::kOk);
  EXPECT_EQ(hex(back, 10), "0102030405060708090a");
  for (int other = 0; other < 256; ++other) {
    if (other == 7) continue;
    block[10] = static_cast<uint8_t>(other);
    EXPECT_EQ(unmask_sno(ring, token_of(block), back), sf::TokenParse::kNotAuthentic) << other;
  }
  block[10] = 7;
  for (int bit = 0; bit < 8 * static_cast<int>(sf::kMaskSnoCheckLen); ++bit) {
    block[11 + bit / 8] ^= static_cast<uint8_t>(1 << (bit % 8));
    EXPECT_EQ(unmask_sno(ring, token_of(block), back), sf::TokenParse::kNotAuthentic) << bit;
    block[11 + bit / 8] ^= static_cast<uint8_t>(1 << (bit % 8));
  }
}

// SHA-256 of "xbxgqz" and of "xchvbg" share their first 5 bytes (519d98e909): while the check
// was that digest, a sno token moved from one prefix to the other without the key (and a pair
// sharing 7 bytes, about 2^28 hashes away, would have moved a bigint token). Keyed, the check
// of the one prefix is not the other's, and the moved token is refused.
TEST(MaskSno, CollidingDigestsNoLongerMoveATokenBetweenPrefixes) {
  uint8_t d1[SHA256_DIGEST_LENGTH], d2[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char *>("xbxgqz"), 6, d1);
  SHA256(reinterpret_cast<const unsigned char *>("xchvbg"), 6, d2);
  ASSERT_EQ(hex(d1, 5), hex(d2, 5)) << "the pair collides in plain SHA-256";
  sf::MaskKeyring ring;
  ring.reset(parse_ok(kKeyFile));
  uint8_t id[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, back[10];
  const std::string t = mask_sno(ring, id, "xbxgqz");
  ASSERT_EQ(unmask_sno(ring, t, back), sf::TokenParse::kOk);
  EXPECT_EQ(unmask_sno(ring, "xchvbg" + t.substr(6), back), sf::TokenParse::kNotAuthentic);
  const std::string u = mask_sno(ring, id, "xchvbg");
  EXPECT_EQ(unmask_sno(ring, "xbxgqz" + u.substr(6), back), sf::TokenParse::kNotAuthentic);
  int64_t value = 0;
  const std::string b = mask(ring, 42, "xbxgqz");
  EXPECT_EQ(unmask(ring, "xchvbg" + b.substr(6), &value), sf::TokenParse::kNotAuthentic);
  // The keyed checks differ, for both kinds and both keys of the file.
  const sf::MaskKeySet set = parse_ok(kKeyFile);
  for (int k = 0; k < set.count; ++k) {
    for (sf::MaskUse use : {sf::MaskUse::kBigintPrefix, sf::MaskUse::kSnoPrefix}) {
      uint8_t pk[32];
      sf::MaskCheck c1, c2;
      ASSERT_TRUE(sf::derive_mask_key(set.entries[k].key, use, pk));
      ASSERT_TRUE(sf::mask_prefix_mac(pk, "xbxgqz", 6, &c1));
      ASSERT_TRUE(sf::mask_prefix_mac(pk, "xchvbg", 6, &c2));
      EXPECT_NE(hex(c1.bytes, sf::kMaskSnoCheckLen), hex(c2.bytes, sf::kMaskSnoCheckLen));
    }
  }
}

// The keyring keeps each key's MAC of the empty prefix and of the last prefix: tokens equal
// the documented block (the prefix key's HMAC, computed afresh) whether the check came from
// the cache or not, with prefixes of every length alternating; a prefix used row after row is
// MACed once per key, the empty one never; new keys start afresh.
TEST(MaskToken, PrefixChecksCachedOrNotGiveTheDocumentedBlock) {
  const std::string k = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1";
  const sf::MaskKeySet set = parse_ok("3 " + k + "0\n5 " + k + "1 active\n9 " + k + "2\n");
  sf::MaskKeyring ring;
  ring.reset(set);
  uint8_t aes[32], big_pk[32], sno_aes[32], sno_pk[32];
  ASSERT_TRUE(sf::derive_mask_key(set.entries[1].key, sf::MaskUse::kBigint, aes));
  ASSERT_TRUE(sf::derive_mask_key(set.entries[1].key, sf::MaskUse::kBigintPrefix, big_pk));
  ASSERT_TRUE(sf::derive_mask_key(set.entries[1].key, sf::MaskUse::kSno, sno_aes));
  ASSERT_TRUE(sf::derive_mask_key(set.entries[1].key, sf::MaskUse::kSnoPrefix, sno_pk));
  std::mt19937_64 rng(8);
  std::vector<std::string> prefixes = {"", "ord", "user", std::string(63, 'z')};
  for (size_t len = 1; len <= 63; ++len) {
    std::string p(len, 'a');
    for (char &c : p) c = static_cast<char>('a' + rng() % 26);
    prefixes.push_back(p);
  }
  for (int round = 0; round < 3; ++round) {
    for (const std::string &p : prefixes) {
      const int64_t v = static_cast<int64_t>(rng());
      uint8_t block[16], body[16];
      sf::MaskCheck c;
      sf::store_be64(block, static_cast<uint64_t>(v));
      block[8] = 5;
      ASSERT_TRUE(sf::mask_prefix_mac(big_pk, p.data(), p.size(), &c));
      std::memcpy(block + 9, c.bytes, sf::kMaskCheckLen);
      ASSERT_TRUE(sf::aes256_block(aes, block, body, false));
      char out[sf::kMaskTokenMax];
      const std::string want(out, sf::format_mask_token(p.data(), p.size(), body, out));
      ASSERT_EQ(mask(ring, v, p), want) << p;
      int64_t back = 0;
      ASSERT_EQ(unmask(ring, want, &back), sf::TokenParse::kOk) << p;
      ASSERT_EQ(back, v);
      uint8_t sno[10], sno_back[10];
      for (uint8_t &b : sno) b = static_cast<uint8_t>(rng());
      std::memcpy(block, sno, 10);
      block[10] = 5;
      ASSERT_TRUE(sf::mask_prefix_mac(sno_pk, p.data(), p.size(), &c));
      std::memcpy(block + 11, c.bytes, sf::kMaskSnoCheckLen);
      ASSERT_TRUE(sf::aes256_block(sno_aes, block, body, false));
      const std::string want_sno(out, sf::format_mask_token(p.data(), p.size(), body, out));
      ASSERT_EQ(mask_sno(ring, sno, p), want_sno) << p;
      ASSERT_EQ(unmask_sno(ring, want_sno, sno_back), sf::TokenParse::kOk) << p;
      ASSERT_EQ(hex(sno_back, 10), hex(sno, 10));
    }
  }
  // One prefix row after row: one MAC per key (three keys tried by unmask), none after.
  uint64_t before = ring.prefix_macs_computed();
  for (int64_t v = 0; v < 1000; ++v) {
    int64_t back = 0;
    ASSERT_EQ(unmask(ring, mask(ring, v, "inv"), &back), sf::TokenParse::kOk);
  }
  EXPECT_EQ(ring.prefix_macs_computed() - before, 3u);
  before = ring.prefix_macs_computed();
  for (int64_t v = 0; v < 1000; ++v) {
    int64_t back = 0;
    ASSERT_EQ(unmask(ring, mask(ring, v, ""), &back), sf::TokenParse::kOk);
  }
  EXPECT_EQ(ring.prefix_macs_computed() - before, 0u) << "the empty prefix's MAC is kept";
  // Other keys under the same ids: their own MACs, not the cached ones.
  const std::string t = mask(ring, 77, "inv");
  ring.reset(parse_ok("3 " + k + "3\n5 " + k + "4 active\n9 " + k + "5\n"));
  int64_t back = 0;
  EXPECT_EQ(unmask(ring, t, &back), sf::TokenParse::kNotAuthentic);
  EXPECT_NE(mask(ring, 77, "inv"), t);
}
