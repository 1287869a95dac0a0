// FakeHfHub: a fake of the Hugging Face Hub's HTTP API (no Hub can run here)
// and of its CDN, on two loopback servers (two origins), for hf:// tests:
//   - GET/HEAD /{datasets/|spaces/}ORG/NAME/resolve/{revision}/{path}:
//     small files answered there, "large" ones (LFS, as the Hub stores
//     .parquet and .mds files) redirected (302) to the CDN with a signed
//     query; ranges served;
//   - GET /api/{type}s/ORG/NAME/tree/{revision}[/{folder}]?recursive=true:
//     the folder's files and subfolders, `page_size` a page, the next page in
//     a Link header (rel="next", absolute URL with a cursor); a missing
//     folder is 404 with X-Error-Code EntryNotFound, a missing repository or
//     revision 404 RepositoryNotFound / RevisionNotFound;
//   - GET /api/{type}s/ORG/NAME/revision/{revision}: the repository's info
//     (what HfFileSystem asks first).
// Revisions in paths are percent-decoded ("refs%2Fconvert%2Fparquet").
// With `require_token` (a private or gated repository) every Hub request
// must carry "Bearer <token>"; the CDN demands none and records every
// Authorization header it received (the token must never reach it).
#ifndef SLUICE_TESTS_STORES_COMMON_FAKE_HF_HUB_H_
#define SLUICE_TESTS_STORES_COMMON_FAKE_HF_HUB_H_

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tests/stores/common/fake_http_server.h"

namespace sluice::testing {

class FakeHfHub {
 public:
  static constexpr char kToken[] = "hf_fakeSecretToken0123456789";

  FakeHfHub();
  std::string url() const { return hub_.url(); }      // HF_ENDPOINT
  std::string cdn_url() const { return cdn_.url(); }  // another origin

  // Adds `path` of `repo` ("datasets/org/name", "org/name" for a model) at
  // `revision`. Thread-safe.
  // The "oid" its tree listing gives a file of `bytes`.
  static std::string OidOf(const std::string& bytes);

  void Put(const std::string& repo, const std::string& revision, const std::string& path,
           std::string bytes);

  // What the fake saw. Thread-safe.
  std::vector<std::string> cdn_authorizations();  // Authorization headers at the CDN
  std::vector<std::string> hub_authorizations();  // at the Hub
  int tree_pages();
  int cdn_gets();

  std::atomic<bool> require_token{false};
  std::atomic<int> page_size{1000};
  // Files at least this large are LFS files, served from the CDN.
  std::atomic<size_t> lfs_threshold{64};
  // The next this many tree requests answer 429 with Retry-After: 1.
  std::atomic<int> throttle_tree{0};

 private:
  FakeResponse HandleHub(const FakeRequest& r);
  FakeResponse HandleCdn(const FakeRequest& r);

  std::mutex mu_;
  // repo -> revision -> path -> bytes
  std::map<std::string, std::map<std::string, std::map<std::string, std::string>>> repos_;
  std::map<std::string, std::string> blobs_;  // CDN id -> bytes
  std::vector<std::string> cdn_auth_;
  std::vector<std::string> hub_auth_;
  int tree_pages_ = 0;
  int cdn_gets_ = 0;
  FakeHttpServer cdn_;  // last two: stop first
  FakeHttpServer hub_;
};

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_STORES_COMMON_FAKE_HF_HUB_H_
