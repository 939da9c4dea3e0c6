// libFuzzer target over the ULID, TypeID, sno, xid (rsxid) and KSUID text parsers and every decoder
// of the core: no input may crash, read out of bounds or hit undefined behaviour (built with ASan
// and UBSan), and every value that parses or decodes must round-trip exactly.
#include "core/foreign_codec.hpp"
#include "core/id128.hpp"
#include "core/ksuid_codec.hpp"
#include "core/layout.hpp"
#include "core/sno_codec.hpp"
#include "core/typeid_codec.hpp"
#include "core/ulid_codec.hpp"
#include "core/xid_codec.hpp"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace snowflake;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // ULID text: parse; what parses prints back as the same text in upper case.
  uint8_t bytes[16];
  if (ulid_decode(reinterpret_cast<const char *>(data), size, bytes) == UlidParse::kOk) {
    char text[kUlidTextLen];
    ulid_encode(bytes, text);
    for (size_t i = 0; i < kUlidTextLen; ++i)
      if (text[i] != std::toupper(data[i])) std::abort();
  }
  // Any 16 bytes: encode, decode, same bytes; the UUID decoders read within them.
  if (size >= 16) {
    char text[kUlidTextLen];
    ulid_encode(data, text);
    uint8_t back[16];
    if (ulid_decode(text, kUlidTextLen, back) != UlidParse::kOk) std::abort();
    if (std::memcmp(back, data, 16) != 0) std::abort();
    const int version = uuid_version(data);
    if (version < -1 || version > 15) std::abort();
    if (uuid_unix_ms(data) > kMaxUnixMs48) std::abort();
    if (load_be128(data) >> 80 != uuid_unix_ms(data)) std::abort();
  }
  // Any 8 bytes as a snowflake ID: unpack and pack give it back.
  if (size >= 8) {
    uint64_t id;
    std::memcpy(&id, data, sizeof id);
    const Decoded d = unpack(id);
    if (d.shard > kMaxShard || d.seq > kMaxSeq) std::abort();
    if (pack(d.ms, d.shard, d.seq) != id) std::abort();
    // Other systems' layouts: every positive ID decodes within its layout's range, and the
    // bound of its time is at or below it.
    const uint64_t positive = id & uint64_t{INT64_MAX};
    for (const foreign::Layout &l : foreign::kLayouts) {
      const foreign::Fields f = foreign::decode(l, positive);
      if (f.unix_ms < l.epoch_unix_ms || f.unix_ms > foreign::last_unix_ms(l)) std::abort();
      if (f.node >> l.node_bits != 0 || f.seq >> l.seq_bits != 0) std::abort();
      uint64_t low = 0;
      if (!foreign::at(l, f.unix_ms, low) || low > positive) std::abort();
      if (foreign::decode(l, low).unix_ms != f.unix_ms) std::abort();
    }
  }
  // ObjectId text: what parses is of the right length and alphabet only.
  const char *text = reinterpret_cast<const char *>(data);
  uint8_t oid[foreign::kObjectIdBytes];
  if (foreign::objectid_from_hex(text, size, oid) == foreign::Parse::kOk) {
    if (size != foreign::kObjectIdTextLen) std::abort();
    for (size_t i = 0; i < size; ++i)
      if (!std::isxdigit(data[i])) std::abort();
  }
  // TypeID text: one text per prefix and value, so what parses encodes back to itself.
  size_t prefix_len = 0;
  if (typeid_decode(text, size, &prefix_len, bytes) == TypeidProblem::kOk) {
    char back[kTypeidMaxLen];
    size_t len = 0;
    if (typeid_encode(text, prefix_len, bytes, back, &len) != TypeidProblem::kOk) std::abort();
    if (len != size || std::memcmp(back, data, size) != 0) std::abort();
  }
  // sno and xid text: one text per value, so what parses encodes back to itself; any 10 (12)
  // bytes encode, decode and split into fields that compose back to the same bytes.
  uint8_t sno_bytes[sno::kBytes];
  if (sno::decode(text, size, sno_bytes).status == sno::TextParse::kOk) {
    char back[sno::kTextLen];
    sno::encode(sno_bytes, back);
    if (size != sno::kTextLen || std::memcmp(back, data, size) != 0) std::abort();
  }
  if (size >= sno::kBytes) {
    char t[sno::kTextLen];
    sno::encode(data, t);
    uint8_t back[sno::kBytes];
    if (sno::decode(t, sno::kTextLen, back).status != sno::TextParse::kOk) std::abort();
    if (std::memcmp(back, data, sno::kBytes) != 0) std::abort();
    const sno::Fields f = sno::fields(data);
    if (f.units > sno::kMaxUnits) std::abort();
    sno::compose(f, back);
    if (std::memcmp(back, data, sno::kBytes) != 0) std::abort();
    uint8_t low[sno::kBytes];
    if (!sno::at_unix_ms(sno::units_to_unix_ms(f.units), low)) std::abort();
    if (std::memcmp(low, data, sno::kBytes) > 0 || sno::fields(low).units != f.units) std::abort();
  }
  uint8_t xid_bytes[xid::kBytes];
  if (xid::decode(text, size, xid_bytes).status == xid::TextParse::kOk) {
    char back[xid::kTextLen];
    xid::encode(xid_bytes, back);
    if (size != xid::kTextLen || std::memcmp(back, data, size) != 0) std::abort();
  }
  if (size >= xid::kBytes) {
    char t[xid::kTextLen];
    xid::encode(data, t);
    uint8_t back[xid::kBytes];
    if (xid::decode(t, xid::kTextLen, back).status != xid::TextParse::kOk) std::abort();
    if (std::memcmp(back, data, xid::kBytes) != 0) std::abort();
    // The bound of its second is at or below it, in the same second.
    uint8_t low[xid::kBytes];
    if (!xid::at_unix_s(xid::unix_s(data), low)) std::abort();
    if (std::memcmp(low, data, xid::kBytes) > 0 || xid::unix_s(low) != xid::unix_s(data))
      std::abort();
  }
  // KSUID text: what parses is 27 base62 characters and encodes back to itself (one text per
  // value); a refusal names a position within the text. Any 20 bytes encode, decode to the
  // same bytes, and have the bound of their second at or below them.
  uint8_t ksuid_bytes[ksuid::kBytes];
  const ksuid::TextParse kp = ksuid::decode(text, size, ksuid_bytes);
  if (kp.status == ksuid::TextParse::kOk) {
    char back[ksuid::kTextLen];
    ksuid::encode(ksuid_bytes, back);
    if (size != ksuid::kTextLen || std::memcmp(back, data, size) != 0) std::abort();
  } else if (kp.position > size) {
    std::abort();
  }
  if (size >= ksuid::kBytes) {
    char t[ksuid::kTextLen];
    ksuid::encode(data, t);
    for (char c : t)
      if (!std::isalnum(static_cast<unsigned char>(c))) std::abort();
    uint8_t back[ksuid::kBytes];
    if (ksuid::decode(t, ksuid::kTextLen, back).status != ksuid::TextParse::kOk) std::abort();
    if (std::memcmp(back, data, ksuid::kBytes) != 0) std::abort();
    uint8_t low[ksuid::kBytes];
    if (!ksuid::at_unix_s(ksuid::unix_s(data), low)) std::abort();
    if (std::memcmp(low, data, ksuid::kBytes) > 0 || ksuid::stamp(low) != ksuid::stamp(data))
      std::abort();
  }
  return 0;
}
