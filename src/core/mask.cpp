#include "core/mask.hpp"

#include "core/id128.hpp"
#include "core/ulid_codec.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

namespace snowflake {

namespace {

int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r'; }

// One whitespace-separated word of [*pos, end).
bool next_word(const char *&pos, const char *end, const char **word, size_t *len) noexcept {
  while (pos < end && is_space(*pos)) ++pos;
  if (pos == end) return false;
  *word = pos;
  while (pos < end && !is_space(*pos)) ++pos;
  *len = static_cast<size_t>(pos - *word);
  return true;
}

uint64_t load_le64(const uint8_t in[8]) noexcept {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | in[i];
  return v;
}

uint64_t rotl(uint64_t x, int b) noexcept { return (x << b) | (x >> (64 - b)); }

struct Sip {
  uint64_t v0, v1, v2, v3;
  void round() noexcept {
    v0 += v1;
    v2 += v3;
    v1 = rotl(v1, 13);
    v3 = rotl(v3, 16);
    v1 ^= v0;
    v3 ^= v2;
    v0 = rotl(v0, 32);
    v2 += v1;
    v0 += v3;
    v1 = rotl(v1, 17);
    v3 = rotl(v3, 21);
    v1 ^= v2;
    v3 ^= v0;
    v2 = rotl(v2, 32);
  }
  void absorb(uint64_t m) noexcept {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

// The façade's SipHash input: the UUID's random bits, the same before and after masking.
uint64_t uuidv47_mask48(const uint8_t u[16], const uint8_t key[16]) noexcept {
  uint8_t msg[10];
  msg[0] = u[6] & 0x0f;
  msg[1] = u[7];
  msg[2] = u[8] & 0x3f;
  std::memcpy(msg + 3, u + 9, 7);
  return siphash24(msg, sizeof msg, load_le64(key), load_le64(key + 8)) & 0xffffffffffffULL;
}

void uuidv47_apply(const uint8_t in[16], const uint8_t key[16], uint8_t out[16],
                   int version) noexcept {
  const uint64_t mask = uuidv47_mask48(in, key);
  uint64_t ts = 0;
  for (int i = 0; i < 6; ++i) ts = (ts << 8) | in[i];
  ts ^= mask;
  std::memmove(out, in, 16);
  for (int i = 5; i >= 0; --i) {
    out[i] = static_cast<uint8_t>(ts);
    ts >>= 8;
  }
  out[6] = static_cast<uint8_t>((out[6] & 0x0f) | (version << 4));
  out[8] = static_cast<uint8_t>((out[8] & 0x3f) | 0x80);
}

// uuidv7_mask()'s façade: one SipHash of rand_b masks the time and rand_a, so that neither
// the time nor snowflake_uuidv7()'s per-millisecond counter shows.
void uuidv7_facade_apply(const uint8_t in[16], const uint8_t key[16], uint8_t out[16],
                         int version) noexcept {
  uint8_t msg[8];
  msg[0] = in[8] & 0x3f;
  std::memcpy(msg + 1, in + 9, 7);
  const uint64_t h = siphash24(msg, sizeof msg, load_le64(key), load_le64(key + 8));
  uint64_t ts = 0;
  for (int i = 0; i < 6; ++i) ts = (ts << 8) | in[i];
  ts ^= h >> 16;
  const unsigned rand_a = ((in[6] & 0x0fu) << 8 | in[7]) ^ static_cast<unsigned>(h & 0xfff);
  std::memmove(out, in, 16);
  for (int i = 5; i >= 0; --i) {
    out[i] = static_cast<uint8_t>(ts);
    ts >>= 8;
  }
  out[6] = static_cast<uint8_t>(version << 4 | rand_a >> 8);
  out[7] = static_cast<uint8_t>(rand_a);
  out[8] = static_cast<uint8_t>((out[8] & 0x3f) | 0x80);
}

// Keys nobody may use: all zeros, and the example the README printed before 1.0.0.
bool refused_key(const uint8_t key[kMaskKeyLen]) noexcept {
  static const uint8_t zero[kMaskKeyLen] = {};
  static const uint8_t readme[kMaskKeyLen] = {0x6f, 0x3a, 0x1e, 0x0b, 0x9c, 0x2d, 0x4f, 0x5a,
                                              0x7e, 0x8b, 0x1c, 0x3d, 0x5f, 0x7a, 0x9b, 0x0c,
                                              0x2e, 0x4d, 0x6f, 0x8a, 0x1b, 0x3c, 0x5d, 0x7e,
                                              0x9f, 0x0a, 0x2b, 0x4c, 0x6d, 0x8e, 0x0f, 0x1a};
  return CRYPTO_memcmp(key, zero, kMaskKeyLen) == 0 || CRYPTO_memcmp(key, readme, kMaskKeyLen) == 0;
}

EVP_CIPHER_CTX *aes_context(const uint8_t key[32], bool encrypt) noexcept {
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return nullptr;
  if (EVP_CipherInit_ex(ctx, EVP_aes_256_ecb(), nullptr, key, nullptr, encrypt ? 1 : 0) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
    EVP_CIPHER_CTX_free(ctx);
    return nullptr;
  }
  return ctx;
}

// One AES block: EVP_Cipher on an ECB context is one call into the cipher, without
// EVP_CipherUpdate's buffering.
bool aes_block(EVP_CIPHER_CTX *ctx, const uint8_t in[16], uint8_t out[16]) noexcept {
  return EVP_Cipher(ctx, out, in, 16) > 0;
}

}  // namespace

bool parse_mask_keys(const char *text, size_t len, MaskKeySet *out, char *problem,
                     size_t problem_size) noexcept {
  out->count = 0;
  out->active = -1;
  out->warning[0] = '\0';
  int line_of[kMaskKeyIds];
  for (int &l : line_of) l = 0;
  int active_line = 0;
  const char *pos = text;
  const char *const end = text + len;
  int line = 0;
  auto fail = [&](const char *what) {
    std::snprintf(problem, problem_size, "line %d: %s", line, what);
    OPENSSL_cleanse(out, sizeof *out);
    out->count = 0;
    out->active = -1;
    return false;
  };
  while (pos < end) {
    ++line;
    const char *eol = static_cast<const char *>(std::memchr(pos, '\n', end - pos));
    if (eol == nullptr) eol = end;
    const char *comment = static_cast<const char *>(std::memchr(pos, '#', eol - pos));
    const char *stop = comment != nullptr ? comment : eol;
    const char *word;
    size_t wlen;
    const char *p = pos;
    pos = eol < end ? eol + 1 : end;
    if (!next_word(p, stop, &word, &wlen)) continue;  // blank or a comment
    int id = 0;
    for (size_t i = 0; i < wlen; ++i) {
      if (word[i] < '0' || word[i] > '9' || wlen > 3)
        return fail("the key id is not a number from 0 to 255");
      id = id * 10 + (word[i] - '0');
    }
    if (id >= kMaskKeyIds) return fail("the key id is not a number from 0 to 255");
    if (line_of[id] != 0) {
      char what[64];
      std::snprintf(what, sizeof what, "key id %d is also on line %d", id, line_of[id]);
      return fail(what);
    }
    if (!next_word(p, stop, &word, &wlen)) return fail("no key after the key id");
    if (wlen != 2 * kMaskKeyLen) return fail("the key is not 64 hex digits (256 bits)");
    MaskKeySet::Entry &e = out->entries[out->count];
    for (size_t i = 0; i < kMaskKeyLen; ++i) {
      const int hi = hex_digit(word[2 * i]);
      const int lo = hex_digit(word[2 * i + 1]);
      if (hi < 0 || lo < 0) return fail("the key is not 64 hex digits (256 bits)");
      e.key[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    if (refused_key(e.key)) {
      return fail(
          "this key is all zeros or the README's example: make one with snowflake_mask_key new");
    }
    for (int i = 0; i < out->count && out->warning[0] == '\0'; ++i) {
      if (CRYPTO_memcmp(out->entries[i].key, e.key, kMaskKeyLen) == 0) {
        std::snprintf(out->warning, sizeof out->warning,
                      "line %d: key id %d holds the same key as key id %d", line, id,
                      out->entries[i].id);
      }
    }
    e.id = static_cast<uint8_t>(id);
    if (next_word(p, stop, &word, &wlen)) {
      if (wlen != 6 || std::memcmp(word, "active", 6) != 0) {
        return fail("after the key, only the word active may follow");
      }
      if (active_line != 0) {
        char what[64];
        std::snprintf(what, sizeof what, "line %d is marked active too: mark one key", active_line);
        return fail(what);
      }
      active_line = line;
      out->active = id;
      if (next_word(p, stop, &word, &wlen))
        return fail("after the word active, nothing may follow");
    }
    line_of[id] = line;
    ++out->count;
  }
  if (out->count == 0) {
    std::snprintf(problem, problem_size, "the file holds no key (a line is: ID HEX active)");
    return false;
  }
  if (out->active < 0) {
    std::snprintf(problem, problem_size,
                  "no key is marked active (add the word active after one key)");
    OPENSSL_cleanse(out, sizeof *out);
    out->count = 0;
    return false;
  }
  return true;
}

bool read_mask_key_file(const char *path, char *buf, size_t cap, size_t *len, char *problem,
                        size_t problem_size) noexcept {
  *len = 0;
  // O_NONBLOCK: a FIFO at the path would otherwise block the postmaster until a writer came.
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) {
      std::snprintf(problem, problem_size, "\"%s\" is a symbolic link: name the file itself", path);
    } else {
      std::snprintf(problem, problem_size, "could not open \"%s\": %s", path, std::strerror(errno));
    }
    return false;
  }
  struct stat st;
  bool ok = fstat(fd, &st) == 0;
  if (!ok) {
    std::snprintf(problem, problem_size, "could not stat \"%s\": %s", path, std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    std::snprintf(problem, problem_size, "\"%s\" is not a regular file", path);
    ok = false;
  } else if (st.st_uid != geteuid() && st.st_uid != 0) {
    std::snprintf(problem, problem_size, "\"%s\" must be owned by the database user or root", path);
    ok = false;
  } else if ((st.st_uid == geteuid() && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) ||
             (st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IXGRP | S_IRWXO)) != 0)) {
    std::snprintf(problem, problem_size,
                  "\"%s\" may be read by others: it must be mode 0600 (or 0640 when owned by root)",
                  path);
    ok = false;
  } else if (static_cast<size_t>(st.st_size) > cap) {
    std::snprintf(problem, problem_size, "\"%s\" is larger than %zu kB", path, cap / 1024);
    ok = false;
  }
  while (ok && *len < cap) {
    const ssize_t n = read(fd, buf + *len, cap - *len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::snprintf(problem, problem_size, "could not read \"%s\": %s", path, std::strerror(errno));
      ok = false;
    }
    if (n <= 0) break;
    *len += static_cast<size_t>(n);
  }
  close(fd);
  return ok;
}

MaskPrefix check_mask_prefix(const char *prefix, size_t len) noexcept {
  if (len > kMaskPrefixMax) return MaskPrefix::kTooLong;
  for (size_t i = 0; i < len; ++i) {
    const char c = prefix[i];
    if (!((c >= 'a' && c <= 'z') || c == '_')) return MaskPrefix::kBadCharacter;
  }
  if (len > 0 && (prefix[0] == '_' || prefix[len - 1] == '_')) return MaskPrefix::kUnderscoreAtEnd;
  return MaskPrefix::kOk;
}

bool mask_prefix_mac(const uint8_t prefix_key[32], const char *prefix, size_t len,
                     MaskCheck *out) noexcept {
  uint8_t mac[32];
  unsigned int mac_len = 0;
  const bool ok =
      HMAC(EVP_sha256(), prefix_key, 32, reinterpret_cast<const unsigned char *>(prefix), len, mac,
           &mac_len) != nullptr &&
      mac_len == 32;
  if (ok) std::memcpy(out->bytes, mac, sizeof out->bytes);
  return ok;
}

TokenParse split_mask_token(const char *token, size_t len, char prefix[kMaskPrefixMax + 1],
                            size_t *prefix_len, uint8_t body[16]) noexcept {
  size_t cut = len;
  while (cut > 0 && token[cut - 1] != '_') --cut;
  // cut is the body's start; the prefix ends one before it.
  const size_t plen = cut == 0 ? 0 : cut - 1;
  if (len - cut != kMaskBodyLen) return TokenParse::kBadLength;
  if (plen > kMaskPrefixMax) return TokenParse::kBadPrefix;
  for (size_t i = 0; i < plen; ++i) {
    const char c = token[i];
    prefix[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  prefix[plen] = '\0';
  if (cut != 0 && (plen == 0 || check_mask_prefix(prefix, plen) != MaskPrefix::kOk)) {
    return TokenParse::kBadPrefix;
  }
  *prefix_len = plen;
  switch (ulid_decode(token + cut, kMaskBodyLen, body)) {
    case UlidParse::kOk:
      return TokenParse::kOk;
    case UlidParse::kBadLength:
      return TokenParse::kBadLength;
    case UlidParse::kBadCharacter:
      return TokenParse::kBadCharacter;
    case UlidParse::kOverflow:
      return TokenParse::kOverflow;
  }
  return TokenParse::kBadCharacter;
}

size_t format_mask_token(const char *prefix, size_t prefix_len, const uint8_t body[16],
                         char out[kMaskTokenMax]) noexcept {
  size_t n = 0;
  if (prefix_len > 0) {
    std::memcpy(out, prefix, prefix_len);
    n = prefix_len;
    out[n++] = '_';
  }
  ulid_encode_lower(body, out + n);
  return n + kMaskBodyLen;
}

uint64_t siphash24(const uint8_t *in, size_t len, uint64_t k0, uint64_t k1) noexcept {
  Sip s{0x736f6d6570736575ULL ^ k0, 0x646f72616e646f6dULL ^ k1, 0x6c7967656e657261ULL ^ k0,
        0x7465646279746573ULL ^ k1};
  const size_t whole = len & ~size_t{7};
  for (size_t i = 0; i < whole; i += 8) s.absorb(load_le64(in + i));
  uint64_t last = static_cast<uint64_t>(len) << 56;
  for (size_t i = whole; i < len; ++i) last |= static_cast<uint64_t>(in[i]) << (8 * (i - whole));
  s.absorb(last);
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

void uuidv47_encode(const uint8_t v7[16], const uint8_t key[16], uint8_t out[16]) noexcept {
  uuidv47_apply(v7, key, out, 4);
}

void uuidv47_decode(const uint8_t v4[16], const uint8_t key[16], uint8_t out[16]) noexcept {
  uuidv47_apply(v4, key, out, 7);
}

void uuidv7_facade_encode(const uint8_t v7[16], const uint8_t key[16], uint8_t out[16]) noexcept {
  uuidv7_facade_apply(v7, key, out, 4);
}

void uuidv7_facade_decode(const uint8_t v4[16], const uint8_t key[16], uint8_t out[16]) noexcept {
  uuidv7_facade_apply(v4, key, out, 7);
}

void *secret_alloc(size_t size) noexcept {
  void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  // Not fatal where the kernel lacks it: the keys still live only here, and are wiped.
  (void)madvise(p, size, MADV_DONTDUMP);
  return p;
}

void secret_free(void *p, size_t size) noexcept {
  if (p == nullptr) return;
  OPENSSL_cleanse(p, size);
  munmap(p, size);
}

bool aes256_block(const uint8_t key[32], const uint8_t in[16], uint8_t out[16],
                  bool decrypt) noexcept {
  EVP_CIPHER_CTX *ctx = aes_context(key, !decrypt);
  const bool ok = ctx != nullptr && aes_block(ctx, in, out);
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

const char *mask_label(MaskUse use) noexcept {
  switch (use) {
    case MaskUse::kBigint:
      return "snowflake mask bigint v1";
    case MaskUse::kUlid:
      return "snowflake mask ulid v1";
    case MaskUse::kUuid:
      return "snowflake mask uuidv47 v1";
    case MaskUse::kUuidv7:
      return "snowflake mask uuidv7 v1";
    case MaskUse::kFingerprint:
      return "snowflake mask fingerprint v1";
    case MaskUse::kSno:
      return "snowflake mask sno v1";
    case MaskUse::kBigintPrefix:
      return "snowflake mask bigint prefix v1";
    case MaskUse::kSnoPrefix:
      return "snowflake mask sno prefix v1";
  }
  return "";
}

bool derive_mask_key(const uint8_t master[kMaskKeyLen], MaskUse use, uint8_t out[32]) noexcept {
  const char *label = mask_label(use);
  unsigned int out_len = 0;
  return HMAC(EVP_sha256(), master, kMaskKeyLen, reinterpret_cast<const unsigned char *>(label),
              std::strlen(label), out, &out_len) != nullptr &&
         out_len == 32;
}

struct MaskKeyring::Slot {
  uint8_t id = 0;
  uint8_t master[kMaskKeyLen] = {};
  bool ready = false;
  EVP_CIPHER_CTX *bigint_enc = nullptr;
  EVP_CIPHER_CTX *bigint_dec = nullptr;
  EVP_CIPHER_CTX *ulid_enc = nullptr;
  EVP_CIPHER_CTX *ulid_dec = nullptr;
  EVP_CIPHER_CTX *sno_enc = nullptr;
  EVP_CIPHER_CTX *sno_dec = nullptr;
  uint8_t uuid_key[16] = {};
  uint8_t uuidv7_key[16] = {};
  // The prefix check of each token kind (0 bigint, 1 sno), HMAC-SHA256 under a key of its own:
  // the check sits inside an AES block of its own kind only, so one prefix key would bound
  // forgeries as well, but with two, a pair of prefixes whose 5 sno check bytes match (about
  // 2^20 sno_mask calls away for a role that chooses prefixes) tells nothing of their bigint
  // checks. The key is taken in once: SHA-256 of it XOR ipad
  // and XOR opad, copied for each MAC (HMAC() would fetch the digest and key it again each
  // call), in OpenSSL's contexts as the AES round keys are. The empty prefix's MAC and the
  // last prefix's are kept, so that a query that masks with one prefix computes it once.
  struct PrefixMac {
    EVP_MD_CTX *inner = nullptr;
    EVP_MD_CTX *outer = nullptr;
    MaskCheck empty = {};
    size_t last_len = 0;  // 0: no last prefix (the empty one is `empty`)
    char last[kMaskPrefixMax] = {};
    MaskCheck last_mac = {};
  } prefix_mac[2];

  static bool prefix_setup(const uint8_t master[kMaskKeyLen], MaskUse use, PrefixMac *pm) noexcept {
    uint8_t k[32];
    uint8_t pad[2][64];
    bool ok = derive_mask_key(master, use, k) && mask_prefix_mac(k, "", 0, &pm->empty);
    for (int i = 0; i < 64; ++i) {
      pad[0][i] = static_cast<uint8_t>((i < 32 ? k[i] : 0) ^ 0x36);
      pad[1][i] = static_cast<uint8_t>((i < 32 ? k[i] : 0) ^ 0x5c);
    }
    ok = ok && (pm->inner = EVP_MD_CTX_new()) != nullptr &&
         (pm->outer = EVP_MD_CTX_new()) != nullptr &&
         EVP_DigestInit_ex(pm->inner, EVP_sha256(), nullptr) == 1 &&
         EVP_DigestUpdate(pm->inner, pad[0], 64) == 1 &&
         EVP_DigestInit_ex(pm->outer, EVP_sha256(), nullptr) == 1 &&
         EVP_DigestUpdate(pm->outer, pad[1], 64) == 1;
    OPENSSL_cleanse(k, sizeof k);
    OPENSSL_cleanse(pad, sizeof pad);
    return ok;
  }

  bool setup() noexcept {
    uint8_t k[32];
    bool ok =
        derive_mask_key(master, MaskUse::kBigint, k) &&
        (bigint_enc = aes_context(k, true)) != nullptr &&
        (bigint_dec = aes_context(k, false)) != nullptr &&
        derive_mask_key(master, MaskUse::kUlid, k) &&
        (ulid_enc = aes_context(k, true)) != nullptr &&
        (ulid_dec = aes_context(k, false)) != nullptr &&
        derive_mask_key(master, MaskUse::kSno, k) && (sno_enc = aes_context(k, true)) != nullptr &&
        (sno_dec = aes_context(k, false)) != nullptr && derive_mask_key(master, MaskUse::kUuid, k);
    if (ok) std::memcpy(uuid_key, k, sizeof uuid_key);
    ok = ok && derive_mask_key(master, MaskUse::kUuidv7, k);
    if (ok) std::memcpy(uuidv7_key, k, sizeof uuidv7_key);
    OPENSSL_cleanse(k, sizeof k);
    ok = ok && prefix_setup(master, MaskUse::kBigintPrefix, &prefix_mac[0]) &&
         prefix_setup(master, MaskUse::kSnoPrefix, &prefix_mac[1]);
    ready = ok;
    return ok;
  }
  ~Slot() {
    EVP_CIPHER_CTX_free(bigint_enc);
    EVP_CIPHER_CTX_free(bigint_dec);
    EVP_CIPHER_CTX_free(ulid_enc);
    EVP_CIPHER_CTX_free(ulid_dec);
    EVP_CIPHER_CTX_free(sno_enc);
    EVP_CIPHER_CTX_free(sno_dec);
    for (PrefixMac &pm : prefix_mac) {
      EVP_MD_CTX_free(pm.inner);
      EVP_MD_CTX_free(pm.outer);
    }
    OPENSSL_cleanse(prefix_mac, sizeof prefix_mac);
    OPENSSL_cleanse(master, sizeof master);
    OPENSSL_cleanse(uuid_key, sizeof uuid_key);
    OPENSSL_cleanse(uuidv7_key, sizeof uuidv7_key);
  }
};

MaskKeyring::MaskKeyring() noexcept {
  for (Slot *&s : slots_) s = nullptr;
}

MaskKeyring::~MaskKeyring() {
  clear();
  EVP_MD_CTX_free(scratch_);
  secret_free(storage_, sizeof(Slot) * kMaskKeyIds);
}

void MaskKeyring::clear() noexcept {
  for (Slot *&s : slots_) {
    if (s != nullptr) s->~Slot();
    s = nullptr;
  }
  if (storage_ != nullptr) OPENSSL_cleanse(storage_, sizeof(Slot) * kMaskKeyIds);
  count_ = 0;
  active_ = -1;
  failed_ = false;
  deciphered_ = 0;
  macs_ = 0;
  if (scratch_ != nullptr) EVP_MD_CTX_reset(scratch_);  // the last MAC's state
}

void MaskKeyring::reset(const MaskKeySet &keys) noexcept {
  clear();
  if (storage_ == nullptr) {
    storage_ = static_cast<Slot *>(secret_alloc(sizeof(Slot) * kMaskKeyIds));
    if (storage_ == nullptr) {
      failed_ = true;
      return;
    }
  }
  for (int i = 0; i < keys.count; ++i) {
    Slot *s = new (&storage_[keys.entries[i].id]) Slot;
    s->id = keys.entries[i].id;
    std::memcpy(s->master, keys.entries[i].key, kMaskKeyLen);
    slots_[s->id] = s;
  }
  count_ = keys.count;
  active_ = keys.active;
  int n = 0;
  if (active_ >= 0) order_[n++] = active_;
  for (int id = 0; id < kMaskKeyIds; ++id) {
    if (slots_[id] != nullptr && id != active_) order_[n++] = id;
  }
}

bool MaskKeyring::has(int id) const noexcept {
  return id >= 0 && id < kMaskKeyIds && slots_[id] != nullptr;
}

bool MaskKeyring::fingerprint(char out[17]) const noexcept {
  out[0] = '\0';
  if (count_ == 0) return false;
  // SHA-256 over every key, the active first, then by id: its id, 1 if active else 0, and
  // HMAC-SHA256(master, "snowflake mask fingerprint v1").
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1;
  uint8_t mac[32];
  for (int i = 0; ok && i < count_; ++i) {
    const Slot *s = slots_[order_[i]];
    const uint8_t head[2] = {s->id, static_cast<uint8_t>(s->id == active_ ? 1 : 0)};
    ok = derive_mask_key(s->master, MaskUse::kFingerprint, mac) &&
         EVP_DigestUpdate(ctx, head, sizeof head) == 1 &&
         EVP_DigestUpdate(ctx, mac, sizeof mac) == 1;
  }
  unsigned int len = 0;
  ok = ok && EVP_DigestFinal_ex(ctx, mac, &len) == 1 && len == 32;
  EVP_MD_CTX_free(ctx);
  if (ok) {
    static const char kHex[] = "0123456789abcdef";
    for (int i = 0; i < 8; ++i) {
      out[2 * i] = kHex[mac[i] >> 4];
      out[2 * i + 1] = kHex[mac[i] & 15];
    }
    out[16] = '\0';
  }
  OPENSSL_cleanse(mac, sizeof mac);
  return ok;
}

MaskKeyring::Slot *MaskKeyring::slot(int id) noexcept {
  if (!has(id)) return nullptr;
  Slot *s = slots_[id];
  if (!s->ready && !s->setup()) {
    failed_ = true;
    return nullptr;
  }
  return s;
}

const MaskCheck *MaskKeyring::check_of(Slot *s, int kind, const char *prefix, size_t len) noexcept {
  const Slot::PrefixMac &pm = s->prefix_mac[kind];
  if (len == 0) return &pm.empty;
  if (len == pm.last_len && std::memcmp(prefix, pm.last, len) == 0) return &pm.last_mac;
  return compute_check(s, kind, prefix, len);
}

// Out of check_of(), so that its buffers do not weigh on every call that the cache answers.
const MaskCheck *MaskKeyring::compute_check(Slot *s, int kind, const char *prefix,
                                            size_t len) noexcept {
  Slot::PrefixMac &pm = s->prefix_mac[kind];
  if (scratch_ == nullptr) scratch_ = EVP_MD_CTX_new();
  uint8_t inner[32], mac[32];
  unsigned int n = 0, m = 0;
  const bool ok = scratch_ != nullptr && EVP_MD_CTX_copy_ex(scratch_, pm.inner) == 1 &&
                  EVP_DigestUpdate(scratch_, prefix, len) == 1 &&
                  EVP_DigestFinal_ex(scratch_, inner, &n) == 1 && n == 32 &&
                  EVP_MD_CTX_copy_ex(scratch_, pm.outer) == 1 &&
                  EVP_DigestUpdate(scratch_, inner, sizeof inner) == 1 &&
                  EVP_DigestFinal_ex(scratch_, mac, &m) == 1 && m == 32;
  // A prefix longer than any the rules allow is answered but not kept.
  MaskCheck *out = len <= kMaskPrefixMax ? &pm.last_mac : &unkept_;
  if (ok) std::memcpy(out->bytes, mac, sizeof out->bytes);
  OPENSSL_cleanse(inner, sizeof inner);
  OPENSSL_cleanse(mac, sizeof mac);
  if (!ok) {
    failed_ = true;
    return nullptr;
  }
  ++macs_;
  if (len <= kMaskPrefixMax) {
    std::memcpy(pm.last, prefix, len);
    pm.last_len = len;
  }
  return out;
}

bool MaskKeyring::mask_bigint(int64_t id, const char *prefix, size_t len,
                              uint8_t body[16]) noexcept {
  Slot *s = slot(active_);
  const MaskCheck *check = s != nullptr ? check_of(s, 0, prefix, len) : nullptr;
  if (check == nullptr) return false;
  uint8_t block[16];
  store_be64(block, static_cast<uint64_t>(id));
  block[8] = s->id;
  std::memcpy(block + 9, check->bytes, kMaskCheckLen);
  return aes_block(s->bigint_enc, block, body);
}

TokenParse MaskKeyring::unmask_bigint(const uint8_t body[16], const char *prefix, size_t len,
                                      int64_t *id, int *key_id) noexcept {
  uint8_t want[16 - 8];
  int found = -1;
  uint64_t value = 0;
  for (int i = 0; i < count_; ++i) {
    Slot *s = slot(order_[i]);
    uint8_t block[16];
    const MaskCheck *check = s != nullptr ? check_of(s, 0, prefix, len) : nullptr;
    if (check == nullptr || !aes_block(s->bigint_dec, body, block)) {
      failed_ = true;
      return TokenParse::kNotAuthentic;
    }
    ++deciphered_;
    want[0] = s->id;
    std::memcpy(want + 1, check->bytes, kMaskCheckLen);
    // Every key tried and compared in constant time: how long it takes tells nothing of
    // which key made the token, or whether one did.
    if (CRYPTO_memcmp(block + 8, want, sizeof want) == 0 && found < 0) {
      found = s->id;
      value = load_be64(block);
    }
    OPENSSL_cleanse(block, sizeof block);
  }
  if (found < 0) return TokenParse::kNotAuthentic;
  *id = static_cast<int64_t>(value);
  *key_id = found;
  return TokenParse::kOk;
}

bool MaskKeyring::mask_sno(const uint8_t id[kMaskSnoLen], const char *prefix, size_t len,
                           uint8_t body[16]) noexcept {
  Slot *s = slot(active_);
  const MaskCheck *check = s != nullptr ? check_of(s, 1, prefix, len) : nullptr;
  if (check == nullptr) return false;
  uint8_t block[16];
  std::memcpy(block, id, kMaskSnoLen);
  block[kMaskSnoLen] = s->id;
  std::memcpy(block + kMaskSnoLen + 1, check->bytes, kMaskSnoCheckLen);
  return aes_block(s->sno_enc, block, body);
}

TokenParse MaskKeyring::unmask_sno(const uint8_t body[16], const char *prefix, size_t len,
                                   uint8_t id[kMaskSnoLen], int *key_id) noexcept {
  static_assert(kMaskSnoLen + 1 + kMaskSnoCheckLen == 16, "a sno token is one AES block");
  uint8_t want[1 + kMaskSnoCheckLen];
  int found = -1;
  uint8_t value[kMaskSnoLen] = {};
  for (int i = 0; i < count_; ++i) {
    Slot *s = slot(order_[i]);
    uint8_t block[16];
    const MaskCheck *check = s != nullptr ? check_of(s, 1, prefix, len) : nullptr;
    if (check == nullptr || !aes_block(s->sno_dec, body, block)) {
      failed_ = true;
      return TokenParse::kNotAuthentic;
    }
    ++deciphered_;
    want[0] = s->id;
    std::memcpy(want + 1, check->bytes, kMaskSnoCheckLen);
    // As unmask_bigint(): every key tried, compared in constant time.
    if (CRYPTO_memcmp(block + kMaskSnoLen, want, sizeof want) == 0 && found < 0) {
      found = s->id;
      std::memcpy(value, block, kMaskSnoLen);
    }
    OPENSSL_cleanse(block, sizeof block);
  }
  if (found < 0) return TokenParse::kNotAuthentic;
  std::memcpy(id, value, kMaskSnoLen);
  OPENSSL_cleanse(value, sizeof value);
  *key_id = found;
  return TokenParse::kOk;
}

bool MaskKeyring::ulid_mask(int key_id, const uint8_t in[16], uint8_t out[16],
                            bool unmask) noexcept {
  Slot *s = slot(key_id);
  return s != nullptr && aes_block(unmask ? s->ulid_dec : s->ulid_enc, in, out);
}

bool MaskKeyring::uuid_mask(int key_id, Facade facade, const uint8_t in[16], uint8_t out[16],
                            bool unmask) noexcept {
  Slot *s = slot(key_id);
  if (s == nullptr) return false;
  if (facade == Facade::kUuidv47) {
    (unmask ? uuidv47_decode : uuidv47_encode)(in, s->uuid_key, out);
  } else {
    (unmask ? uuidv7_facade_decode : uuidv7_facade_encode)(in, s->uuidv7_key, out);
  }
  return true;
}

}  // namespace snowflake
