// Masking: IDs shown outside the database without what they tell (time, shard, order), under
// keys the server holds. The key file's format, the keys derived from each master key, the
// 64-bit kind's token, the ULID mask and the uuidv47 façade. docs/internals.md#masking gives
// the format byte by byte and the security argument.
#pragma once
#include "core/pg_free.hpp"

#include <cstddef>
#include <cstdint>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace snowflake {

constexpr size_t kMaskKeyLen = 32;     // a master key: 256 bits
constexpr int kMaskKeyIds = 256;       // key ids 0 to 255
constexpr size_t kMaskBodyLen = 26;    // a token's body: 128 bits in Crockford base32
constexpr size_t kMaskPrefixMax = 63;  // TypeID's limit for a prefix
constexpr size_t kMaskTokenMax = kMaskPrefixMax + 1 + kMaskBodyLen;
constexpr size_t kMaskCheckLen = 7;            // bytes of the prefix's MAC inside a token
constexpr size_t kMaskSnoLen = 10;             // a sno inside a sno token
constexpr size_t kMaskSnoCheckLen = 5;         // of the prefix's MAC inside a sno token
constexpr size_t kMaskKeyFileMax = 64 * 1024;  // the most of a key file that is read

struct MaskKeySet {
  struct Entry {
    uint8_t id;
    uint8_t key[kMaskKeyLen];
  };
  int count = 0;
  int active = -1;        // the active key's id
  char warning[96] = "";  // what is odd but loads (one key under two ids), or empty
  Entry entries[kMaskKeyIds];
};

// Parses a key file: one key a line, `ID HEX [active]` (ID 0 to 255, HEX 64 hex digits,
// exactly one line `active`), `#` to the end of a line a comment. An all-zero key and the
// key the README once printed as its example are refused. On failure returns false and
// writes what is wrong, with its line number, to problem; never any part of a key.
bool parse_mask_keys(const char *text, size_t len, MaskKeySet *out, char *problem,
                     size_t problem_size) noexcept;

// Reads the key file at path into buf (at most cap bytes): a regular file, not a symbolic
// link, owned by the effective user or root and not readable by others (as PostgreSQL asks
// of ssl_key_file). Never blocks on a FIFO or a device. On failure false, with the problem.
bool read_mask_key_file(const char *path, char *buf, size_t cap, size_t *len, char *problem,
                        size_t problem_size) noexcept;

// A prefix is TypeID's: at most 63 of a-z and _, neither first nor last an underscore.
enum class MaskPrefix : uint8_t { kOk, kTooLong, kBadCharacter, kUnderscoreAtEnd };
MaskPrefix check_mask_prefix(const char *prefix, size_t len) noexcept;

// What a token binds of its prefix: the first 7 bytes (a bigint token) or 5 (a sno token) of
// HMAC-SHA256(prefix key, the prefix's text), the prefix key derived from the master key that
// makes the token under its kind's label (MaskUse::kBigintPrefix, kSnoPrefix). Keyed, so that
// prefixes whose checks collide cannot be searched for without the key: with a plain digest
// they could, and a token moved between two such prefixes unmasked under either.
struct MaskCheck {
  uint8_t bytes[kMaskCheckLen];
};
bool mask_prefix_mac(const uint8_t prefix_key[32], const char *prefix, size_t len,
                     MaskCheck *out) noexcept;

enum class TokenParse : uint8_t {
  kOk,
  kBadLength,     // the body is not 26 characters
  kBadCharacter,  // a character outside Crockford's base32
  kOverflow,      // the body's first character is above 7
  kBadPrefix,     // the prefix breaks the prefix rules
  kNotAuthentic,  // no key of the set made it, or it was changed
};

// Splits a token into its prefix (before the last underscore, lower-cased, possibly empty)
// and its 16-byte body. Case-insensitive.
TokenParse split_mask_token(const char *token, size_t len, char prefix[kMaskPrefixMax + 1],
                            size_t *prefix_len, uint8_t body[16]) noexcept;
// Writes prefix_body (or the body alone for an empty prefix), lower case; returns its length.
size_t format_mask_token(const char *prefix, size_t prefix_len, const uint8_t body[16],
                         char out[kMaskTokenMax]) noexcept;

// SipHash-2-4 (Aumasson and Bernstein), as uuidv47 uses it.
uint64_t siphash24(const uint8_t *in, size_t len, uint64_t k0, uint64_t k1) noexcept;
// uuidv47's façade: a UUIDv7's 48-bit time XORed with SipHash of its 74 bits after the
// version, the version set to 4; and back, the version set to 7. key is uuidv47's 16 bytes
// (k0, k1 little endian). The 12 bits of rand_a pass through: snowflake_uuidv7()'s counter.
void uuidv47_encode(const uint8_t v7[16], const uint8_t key[16], uint8_t out[16]) noexcept;
void uuidv47_decode(const uint8_t v4[16], const uint8_t key[16], uint8_t out[16]) noexcept;
// uuidv7_mask()'s façade: SipHash-2-4 of the 62 random bits of rand_b (bytes 8 to 15, the
// variant cleared) masks both the 48-bit time (its high 48 bits) and the 12 bits of rand_a
// (its low 12); the version set to 4, and back to 7. The variant must be RFC 9562's.
void uuidv7_facade_encode(const uint8_t v7[16], const uint8_t key[16], uint8_t out[16]) noexcept;
void uuidv7_facade_decode(const uint8_t v4[16], const uint8_t key[16], uint8_t out[16]) noexcept;

// Memory for keys: mapped by the module alone, zeroed, left out of core dumps (MADV_DONTDUMP);
// secret_free wipes it before unmapping. null when the system has no memory to give.
void *secret_alloc(size_t size) noexcept;
void secret_free(void *p, size_t size) noexcept;

// AES-256 on one block, as every mask uses it (for known-answer tests and tools).
bool aes256_block(const uint8_t key[32], const uint8_t in[16], uint8_t out[16],
                  bool decrypt) noexcept;

// A master key's derived keys: HMAC-SHA256(master, label). kFingerprint derives no key: its
// first 8 bytes name the master key where nodes are compared (snowflake_status()).
// kBigintPrefix and kSnoPrefix key the prefix check of each token kind (mask_prefix_mac).
enum class MaskUse : uint8_t {
  kBigint,
  kUlid,
  kUuid,
  kUuidv7,
  kFingerprint,
  kSno,
  kBigintPrefix,
  kSnoPrefix
};
const char *mask_label(MaskUse use) noexcept;
bool derive_mask_key(const uint8_t master[kMaskKeyLen], MaskUse use, uint8_t out[32]) noexcept;

// The keys of one key file, with each master key's derived keys and ciphers set up on first
// use. The keys live in secret_alloc() memory, wiped when replaced (the AES round keys are in
// OpenSSL's cipher contexts, which OpenSSL wipes when they are freed). Not thread-safe: one
// per process. Every operation returns false (or kNotAuthentic)
// only for what it names; a cipher library failure returns false with failed() set.
class MaskKeyring {
 public:
  MaskKeyring() noexcept;
  ~MaskKeyring();
  MaskKeyring(const MaskKeyring &) = delete;
  MaskKeyring &operator=(const MaskKeyring &) = delete;

  // Takes these keys (copied), forgetting every key and cipher before.
  void reset(const MaskKeySet &keys) noexcept;
  void clear() noexcept;

  int count() const noexcept { return count_; }
  int active_id() const noexcept { return active_; }
  bool has(int id) const noexcept;
  bool failed() const noexcept { return failed_; }
  // The key file's fingerprint, 16 hex digits and a NUL: the first 8 bytes of SHA-256 over
  // every key, the active first, then by id: its id byte, 1 if active else 0, and
  // HMAC-SHA256(master, "snowflake mask fingerprint v1"). Equal on two servers when they hold
  // the same keys under the same ids with the same one active (a retired key too: it unmasks
  // old tokens); tells nothing of a key. False without keys or when the library fails.
  bool fingerprint(char out[17]) const noexcept;

  // The 64-bit kind: with the active key. prefix (len bytes, at most kMaskPrefixMax, empty for
  // none) is the token's, checked by the caller (check_mask_prefix).
  bool mask_bigint(int64_t id, const char *prefix, size_t len, uint8_t body[16]) noexcept;
  // Tries every key, whichever made the token, so that the time taken tells nothing of
  // which key did; on success the ID and the key's id. Each key checks the prefix's MAC
  // under its own prefix key.
  TokenParse unmask_bigint(const uint8_t body[16], const char *prefix, size_t len, int64_t *id,
                           int *key_id) noexcept;
  // The sno kind, a token of the same form under keys of its own: the block is the 10 bytes
  // of the sno, the key's id and the first 5 bytes of the prefix's MAC.
  bool mask_sno(const uint8_t id[kMaskSnoLen], const char *prefix, size_t len,
                uint8_t body[16]) noexcept;
  TokenParse unmask_sno(const uint8_t body[16], const char *prefix, size_t len,
                        uint8_t id[kMaskSnoLen], int *key_id) noexcept;
  // Prefix MACs computed (not found in a key's cache) since the keys were set (for the tests).
  uint64_t prefix_macs_computed() const noexcept { return macs_; }
  // Blocks deciphered by unmask_bigint() and unmask_sno() since the keys were set (for the tests).
  uint64_t blocks_deciphered() const noexcept { return deciphered_; }
  // 128-bit kinds, with the key of that id (which must be present: has()).
  bool ulid_mask(int key_id, const uint8_t in[16], uint8_t out[16], bool unmask) noexcept;
  enum class Facade : uint8_t { kUuidv7, kUuidv47 };
  bool uuid_mask(int key_id, Facade facade, const uint8_t in[16], uint8_t out[16],
                 bool unmask) noexcept;

 private:
  struct Slot;
  Slot *slot(int id) noexcept;  // the key's slot, its ciphers set up; null on failure
  // The prefix's check under slot s's prefix key of a kind (0 bigint, 1 sno): the key's kept
  // MAC (of the empty prefix, or of the last), valid until the next call; null when the
  // library fails (failed() set). Pointed to rather than copied: with a copy through the
  // stack, bench/mask.sh read about 8 ns more a token.
  const MaskCheck *check_of(Slot *s, int kind, const char *prefix, size_t len) noexcept;
  const MaskCheck *compute_check(Slot *s, int kind, const char *prefix, size_t len) noexcept;

  int count_ = 0;
  int active_ = -1;
  bool failed_ = false;
  uint64_t deciphered_ = 0;
  uint64_t macs_ = 0;
  MaskCheck unkept_ = {};             // the check of a prefix too long to keep
  evp_md_ctx_st *scratch_ = nullptr;  // where a prefix MAC is computed, made on first use
  int order_[kMaskKeyIds];            // ids, the active first, then ascending
  Slot *slots_[kMaskKeyIds];
  Slot *storage_ = nullptr;  // kMaskKeyIds slots in secret_alloc() memory, made on first use
};

}  // namespace snowflake
