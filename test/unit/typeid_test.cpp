// Unit tests of the TypeID codec: every case of the specification's own valid.yml and
// invalid.yml (kept beside the repo, in ../shared/vectors/typeid/), each invalid one with the
// rule it breaks, and random round trips as the specification recommends.
#include "core/chacha.hpp"
#include "core/typeid_codec.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace snowflake;

#ifndef SNOWFLAKE_VECTORS_DIR
#error "SNOWFLAKE_VECTORS_DIR: the Makefile passes it (SNOWFLAKE_VECTORS)"
#endif

namespace {

// One "- name: ..." entry of the spec's files: its keys and their string values.
using Entry = std::map<std::string, std::string>;

struct Vectors {
  std::vector<Entry> entries;
  size_t entry_lines = 0;  // lines that start an entry, counted apart from the parser
  bool read = false;
};

std::string trim(const std::string &s) {
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// A value as the files write it: "double-quoted" (with \" and \\) or bare.
std::string scalar(const std::string &raw) {
  const std::string v = trim(raw);
  if (v.empty() || v[0] != '"') return v;
  std::string out;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] == '"') return out;
    if (v[i] == '\\' && i + 1 < v.size()) ++i;
    out += v[i];
  }
  ADD_FAILURE() << "unterminated string: " << v;
  return out;
}

// The shape both files have: comments, blank lines, and a list of flat maps, each begun by
// "- key: value" and continued by indented "key: value" lines.
Vectors load(const char *file) {
  Vectors vs;
  const std::string path = std::string(SNOWFLAKE_VECTORS_DIR) + "/typeid/" + file;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path
                  << ": the TypeID spec's vectors are kept beside the repo, in ../shared/vectors"
                     " (make SNOWFLAKE_VECTORS=DIR names another folder)";
    return vs;
  }
  vs.read = true;
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 2, "- ") == 0) ++vs.entry_lines;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    std::string kv = t;
    if (t.compare(0, 2, "- ") == 0) {
      vs.entries.emplace_back();
      kv = t.substr(2);
    } else if (line[0] != ' ' || vs.entries.empty()) {
      ADD_FAILURE() << path << ": a line outside any entry: " << line;
      continue;
    }
    const size_t colon = kv.find(':');
    if (colon == std::string::npos) {
      ADD_FAILURE() << path << ": no key in: " << line;
      continue;
    }
    vs.entries.back()[trim(kv.substr(0, colon))] = scalar(kv.substr(colon + 1));
  }
  return vs;
}

bool parse_uuid(const std::string &s, uint8_t out[16]) {
  if (s.size() != 36) return false;
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
      continue;
    }
    unsigned hi, lo;
    if (std::sscanf(s.substr(i, 2).c_str(), "%1x%1x", &hi, &lo) != 2) return false;
    out[n++] = static_cast<uint8_t>(hi << 4 | lo);
    ++i;
  }
  return n == 16;
}

std::string encode(const std::string &prefix, const uint8_t uuid[16], TypeidProblem *p) {
  char out[kTypeidMaxLen];
  size_t len = 0;
  *p = typeid_encode(prefix.data(), prefix.size(), uuid, out, &len);
  return std::string(out, *p == TypeidProblem::kOk ? len : 0);
}

TypeidProblem decode(const std::string &text, std::string *prefix, uint8_t uuid[16]) {
  size_t plen = 0;
  const TypeidProblem p = typeid_decode(text.data(), text.size(), &plen, uuid);
  if (p == TypeidProblem::kOk) *prefix = text.substr(0, plen);
  return p;
}

}  // namespace

TEST(TypeidSpec, EveryValidCaseDecodesAndEncodes) {
  const Vectors vs = load("valid.yml");
  ASSERT_TRUE(vs.read);
  size_t checked = 0;
  for (const Entry &e : vs.entries) {
    const std::string name = e.count("name") ? e.at("name") : "?";
    ASSERT_TRUE(e.count("typeid") && e.count("prefix") && e.count("uuid")) << name;
    uint8_t want[16];
    ASSERT_TRUE(parse_uuid(e.at("uuid"), want)) << name << ": " << e.at("uuid");

    std::string prefix;
    uint8_t got[16];
    ASSERT_EQ(decode(e.at("typeid"), &prefix, got), TypeidProblem::kOk) << name;
    EXPECT_EQ(prefix, e.at("prefix")) << name;
    EXPECT_EQ(std::memcmp(got, want, 16), 0) << name;

    TypeidProblem p;
    EXPECT_EQ(encode(e.at("prefix"), want, &p), e.at("typeid")) << name;
    EXPECT_EQ(p, TypeidProblem::kOk) << name;
    ++checked;
  }
  // Every entry of the file, none skipped: 9 in the specification's valid.yml as copied.
  EXPECT_GT(checked, 0u);
  EXPECT_EQ(checked, vs.entry_lines);
  EXPECT_EQ(checked, 9u);
}

TEST(TypeidSpec, EveryInvalidCaseIsRejectedForItsRule) {
  // The rule each case of invalid.yml breaks, as this codec names it.
  const std::map<std::string, TypeidProblem> rule = {
      {"prefix-uppercase", TypeidProblem::kPrefixUppercase},
      {"prefix-numeric", TypeidProblem::kPrefixBadCharacter},
      {"prefix-period", TypeidProblem::kPrefixBadCharacter},
      {"prefix-non-ascii", TypeidProblem::kPrefixBadCharacter},
      {"prefix-spaces", TypeidProblem::kPrefixBadCharacter},
      {"prefix-64-chars", TypeidProblem::kPrefixTooLong},
      {"separator-empty-prefix", TypeidProblem::kSeparatorWithoutPrefix},
      {"separator-empty", TypeidProblem::kSeparatorWithoutPrefix},
      {"suffix-short", TypeidProblem::kSuffixBadLength},
      {"suffix-long", TypeidProblem::kSuffixBadLength},
      {"suffix-spaces", TypeidProblem::kSuffixBadCharacter},
      {"suffix-uppercase", TypeidProblem::kSuffixUppercase},
      {"suffix-hyphens", TypeidProblem::kSuffixBadCharacter},
      {"suffix-wrong-alphabet", TypeidProblem::kSuffixBadCharacter},
      {"suffix-ambiguous-crockford", TypeidProblem::kSuffixBadCharacter},
      {"suffix-hyphens-crockford", TypeidProblem::kSuffixBadLength},
      {"suffix-overflow", TypeidProblem::kSuffixOverflow},
      {"prefix-underscore-start", TypeidProblem::kPrefixStartsWithUnderscore},
      {"prefix-underscore-end", TypeidProblem::kPrefixEndsWithUnderscore},
      {"empty", TypeidProblem::kSuffixBadLength},
      {"prefix-empty", TypeidProblem::kSuffixBadLength},
  };
  const Vectors vs = load("invalid.yml");
  ASSERT_TRUE(vs.read);
  size_t checked = 0;
  for (const Entry &e : vs.entries) {
    const std::string name = e.count("name") ? e.at("name") : "?";
    ASSERT_TRUE(e.count("typeid")) << name;
    std::string prefix;
    uint8_t got[16];
    const TypeidProblem p = decode(e.at("typeid"), &prefix, got);
    EXPECT_NE(p, TypeidProblem::kOk) << name << " is accepted";
    // A case added to the file must be given its rule here, not pass unnamed.
    ASSERT_TRUE(rule.count(name)) << "no rule for invalid.yml's " << name;
    EXPECT_EQ(static_cast<int>(p), static_cast<int>(rule.at(name))) << name;
    ++checked;
  }
  EXPECT_GT(checked, 0u);
  EXPECT_EQ(checked, vs.entry_lines);
  EXPECT_EQ(checked, 21u);
}

TEST(TypeidCodec, Prefixes) {
  const std::string max63(63, 'a');
  for (const std::string &ok : {std::string(""), std::string("a"), std::string("user"),
                                std::string("a_b_c"), std::string("my__type"), max63}) {
    EXPECT_EQ(typeid_check_prefix(ok.data(), ok.size()), TypeidProblem::kOk) << ok;
  }
  const std::pair<std::string, TypeidProblem> bad[] = {
      {max63 + "a", TypeidProblem::kPrefixTooLong},
      {"_", TypeidProblem::kPrefixStartsWithUnderscore},
      {"_a", TypeidProblem::kPrefixStartsWithUnderscore},
      {"a_", TypeidProblem::kPrefixEndsWithUnderscore},
      {"User", TypeidProblem::kPrefixUppercase},
      {"user1", TypeidProblem::kPrefixBadCharacter},
      {"us-er", TypeidProblem::kPrefixBadCharacter},
      {std::string("us\0er", 5), TypeidProblem::kPrefixBadCharacter},
      {"\xc3\xa9", TypeidProblem::kPrefixBadCharacter},
  };
  for (const auto &[prefix, problem] : bad) {
    EXPECT_EQ(typeid_check_prefix(prefix.data(), prefix.size()), problem) << prefix;
    uint8_t zeros[16] = {};
    TypeidProblem p;
    EXPECT_EQ(encode(prefix, zeros, &p), "");
    EXPECT_EQ(p, problem) << prefix;
  }
}

TEST(TypeidCodec, EmptyPrefixHasNoSeparator) {
  uint8_t ones[16];
  std::memset(ones, 0xff, sizeof ones);
  TypeidProblem p;
  EXPECT_EQ(encode("", ones, &p), "7zzzzzzzzzzzzzzzzzzzzzzzzz");
  const std::string longest = std::string(63, 'z') + "_7zzzzzzzzzzzzzzzzzzzzzzzzz";
  EXPECT_EQ(encode(std::string(63, 'z'), ones, &p), longest);
  EXPECT_EQ(longest.size(), kTypeidMaxLen);
}

TEST(TypeidCodec, SuffixCharacters) {
  // Each character of the alphabet in each position decodes; each other byte does not.
  const std::string alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
  for (int c = 0; c < 256; ++c) {
    std::string s = "user_01h455vb4pex5vsknk084sn02q";
    s[5 + 13] = static_cast<char>(c);
    std::string prefix;
    uint8_t got[16];
    const TypeidProblem p = decode(s, &prefix, got);
    if (alphabet.find(static_cast<char>(c)) != std::string::npos && c != 0) {
      EXPECT_EQ(p, TypeidProblem::kOk) << c;
    } else if (c == '_') {
      EXPECT_NE(p, TypeidProblem::kOk) << c;  // now a prefix "user_01h455vb4pex5" with digits
    } else if (c >= 'A' && c <= 'Z' &&
               alphabet.find(static_cast<char>(c - 'A' + 'a')) != std::string::npos) {
      EXPECT_EQ(p, TypeidProblem::kSuffixUppercase) << c;
    } else {
      EXPECT_EQ(p, TypeidProblem::kSuffixBadCharacter) << c;
    }
  }
  std::string prefix;
  uint8_t got[16];
  EXPECT_EQ(decode("7zzzzzzzzzzzzzzzzzzzzzzzzz", &prefix, got), TypeidProblem::kOk);
  EXPECT_EQ(decode("80000000000000000000000000", &prefix, got), TypeidProblem::kSuffixOverflow);
  EXPECT_EQ(decode("zzzzzzzzzzzzzzzzzzzzzzzzzz", &prefix, got), TypeidProblem::kSuffixOverflow);
}

TEST(TypeidCodec, RoundTripsRandomValues) {
  RandomStream rng;
  uint8_t seed[ChaCha20::kSeedBytes] = {7, 1, 9};
  rng.seed(seed);
  const std::string prefixes[] = {"", "user", "a_b", std::string(63, 'q')};
  for (int i = 0; i < 10000; ++i) {
    uint8_t b[16], back[16];
    const uint64_t words[2] = {rng.next_u64(), rng.next_u64()};
    std::memcpy(b, words, 16);
    const std::string &prefix = prefixes[i % 4];
    TypeidProblem p;
    const std::string text = encode(prefix, b, &p);
    ASSERT_EQ(p, TypeidProblem::kOk);
    std::string got_prefix;
    ASSERT_EQ(decode(text, &got_prefix, back), TypeidProblem::kOk) << text;
    ASSERT_EQ(got_prefix, prefix);
    ASSERT_EQ(std::memcmp(b, back, 16), 0) << text;
    ASSERT_EQ(encode(got_prefix, back, &p), text);  // random_typeid == encode(decode(it))
  }
}
