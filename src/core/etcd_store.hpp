// The lease store on etcd: the keys' layout and the lease protocol's four kinds of request
// (grant, list the owners, claim a range and read its marks, renew, write the marks,
// revoke), over an EtcdTransport. Keys, under the fleet's prefix, with shard numbers in four
// digits so that a range of keys is a range of shards:
//   PREFIX/owner/NNNN  tied to the holder's lease (etcd deletes it with the lease); its value
//                      names the holder, for operators
//   PREFIX/mark/NNNN   no lease: no ID of the shard reached this time ({"unix_ms","epoch_ms"})
//   PREFIX/claim/LEASE tied to the lease (LEASE in decimal), put by every claim of it: its
//                      mod_revision fences claims as the marks' fence mark writes
// The three rules of lease.hpp, as transactions: a claim compares create_revision 0 of every
// owner key, and the mod_revision of its lease's claim key below the revision of the owners'
// listing it was chosen from, plus one (a claim whose answer was lost and that lands after a
// later claim is refused; one that lands before it makes the later one fail, and the holder
// finds the range it landed on among the owners and takes it); a mark write compares the lease of
// every owner key and the mod_revision of every mark key against the revision the marks were last
// read or written at; a new holder reads the marks in its claim. Nothing here throws: every failure
// is a StoreResult with etcd's or libcurl's own words.
#pragma once
#include "core/pg_free.hpp"

#include "core/etcd_json.hpp"
#include "core/etcd_transport.hpp"
#include "core/lease.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace snowflake {

// The most owner keys one range request asks for: at about 140 bytes each in etcd's
// answer, a page stays well below the 1 MiB an answer may take.
constexpr int64_t kOwnerKeysPerPage = 1000;

class EtcdStore : public LeaseStore {
 public:
  // Over libcurl (HttpTransport).
  EtcdStore(EtcdSettings settings, std::function<bool()> abort);
  // Over another transport (of settings, the prefix and holder alone are used).
  EtcdStore(EtcdSettings settings, EtcdTransport &transport);
  EtcdStore(const EtcdStore &) = delete;
  EtcdStore &operator=(const EtcdStore &) = delete;

  void reconfigure(EtcdSettings settings);
  const std::string &endpoint() const noexcept;

  StoreResult grant(int64_t ttl_s, int64_t *lease) override;
  StoreResult held(uint32_t low, uint32_t high, std::vector<ShardOwner> *owners,
                   int64_t *revision) override;
  StoreResult acquire(int64_t lease, uint32_t first, uint32_t count, int64_t listed,
                      StoredMark *mark) override;
  StoreResult renew(int64_t lease, int64_t *ttl_s) override;
  StoreResult mark(int64_t lease, uint32_t first, uint32_t count, StoredMark *mark) override;
  StoreResult release(int64_t lease) override;
  StoreResult owned(int64_t lease, uint32_t first, uint32_t count) override;

 private:
  bool call(const char *path, const std::string &body, EtcdResponse *out, std::string *error);
  // The answer to a range request over [from, to), at most limit keys (0: all), as of
  // revision (0: the latest) (*body), or what went wrong, named what.
  StoreResult range(const char *what, const std::string &from, const std::string &to,
                    bool keys_only, int64_t limit, std::string *body, int64_t revision = 0);

  std::string prefix_;
  std::string holder_;                   // the owner keys' value
  std::unique_ptr<HttpTransport> http_;  // the transport when it is libcurl
  EtcdTransport &transport_;
};

}  // namespace snowflake
