// Read-only stores over plain HTTP(S) GET: http:// and https:// roots
// (objects at "<root>/<key>"), and the base the Databricks Files API store
// builds on (stores/dbfs).
//
// Environment (http/https): SLUICE_HTTP_BEARER_TOKEN, when set, is sent as
// "Authorization: Bearer <token>" (e.g. a Hugging Face token); it is never
// put in error text. A query on the root URL (e.g. a signed URL's) is
// appended to every object URL.
//
// Put, PutFile and List answer kUnimplemented: HTTP has no writes or
// listings (subclasses with writes turn on Writable()). Thread safety: as
// every Store (store.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>

#include "base/status.h"
#include "stores/common/object_http.h"
#include "stores/credentials/shared_credential.h"
#include "stores/http/http_client.h"
#include "stores/store.h"

namespace sluice {

// A store whose objects are fetched by GET/HEAD on ObjectUrl(key), with an
// optional bearer token: a fixed one, or a SharedCredential's (its `bearer`,
// asked per request so that a refreshed token is used; it must outlive
// nothing: the store holds it). Subclasses add writes and listings.
class BearerHttpStore : public Store {
 public:
  BearerHttpStore(std::string root, std::string bearer, std::unique_ptr<HttpClient> client,
                  StoreOptions options);
  BearerHttpStore(std::string root, std::shared_ptr<SharedCredential> credential,
                  std::unique_ptr<HttpClient> client, StoreOptions options);
  ~BearerHttpStore() override;

  std::string root() const override { return root_; }
  boost::asio::awaitable<Result<ObjectInfo>> Head(std::string key) override;
  boost::asio::awaitable<Result<std::string>> GetRange(std::string key, uint64_t offset,
                                                       uint64_t length) override;
  boost::asio::awaitable<Result<std::string>> GetRangeOnly(std::string key, uint64_t offset,
                                                           uint64_t length) override;
  // Any version (no If-Match), of `version.size` when it is given;
  // `version.stated` set as SendRangedGet sets it.
  boost::asio::awaitable<Result<std::string>> GetRangeOnlyOfVersion(
      std::string key, uint64_t offset, uint64_t length, ObjectVersion version) override;
  boost::asio::awaitable<Result<uint64_t>> GetRangeOnlyInto(
      std::string key, uint64_t offset, uint64_t length, ObjectVersion version, char* into,
      IntoProgress* progress = nullptr) override;
  RangedPartsClaim ClaimRangedParts(uint64_t length, uint64_t part_size) override;
  boost::asio::awaitable<Result<std::string>> Get(std::string key) override;
  boost::asio::awaitable<Status> GetToFile(std::string key, std::string path,
                                           std::optional<uint64_t> expected_size) override;
  boost::asio::awaitable<Status> GetToFileFilling(std::string key, std::string path,
                                                  std::optional<uint64_t> expected_size,
                                                  FillWatermark* fill) override;
  bool ReportsFills() const override { return true; }
  boost::asio::awaitable<Status> PutFile(std::string key, std::string path) override;
  boost::asio::awaitable<Status> Put(std::string key, std::string bytes) override;
  boost::asio::awaitable<Result<std::vector<ObjectInfo>>> List(std::string prefix) override;

 protected:
  // The absolute URL of `key` (already validated).
  virtual std::string ObjectUrl(const std::string& key) const = 0;
  // The Authorization header, if any, and the credential's other headers
  // (Credential::headers). Errors: the credential's (it never
  // holds a secret).
  boost::asio::awaitable<Result<HttpHeaders>> AuthHeaders();
  // The headers that authorize a `method` request of `url` (absolute, as
  // sent): AuthHeaders(), unless a store signs each request (OCI's native
  // API). Head, Get, GetRange and GetToFile ask it; GetToFile's parts share
  // the headers of one GET (a Range header is never signed).
  virtual boost::asio::awaitable<Result<HttpHeaders>> RequestHeaders(HttpMethod method,
                                                                     const std::string& url);
  // Put and PutFile write only when this says so: then each is one PUT of
  // ObjectUrl(key) + UploadQuery(), its body the bytes or streamed from the
  // file, authorized by RequestHeaders(kPut, url) (the body's headers are
  // added after, as OCI's SDK signs PutObject without them).
  virtual bool Writable() const { return false; }
  virtual std::string UploadQuery() const { return ""; }
  Status Context(const Status& s, const std::string& key) const;
  HttpClient& client() { return *client_; }
  const StoreOptions& options() const { return options_; }

 private:
  // GetRange (kCutToRange) and GetRangeOnly (kRefuse); `version` without
  // an etag (GetRangeOnlyOfVersion: its size and stated).
  boost::asio::awaitable<Result<std::string>> Ranged(std::string key, uint64_t offset,
                                                     uint64_t length, WholeObjectAnswer whole,
                                                     ObjectVersion version = {});
  // Put (`bytes`) and PutFile (`path`, which then replaces the bytes).
  boost::asio::awaitable<Status> Upload(std::string key, std::string bytes,
                                        std::optional<std::string> path);

  std::string root_;
  std::string bearer_;  // a secret
  std::shared_ptr<SharedCredential> credential_;  // when set, replaces bearer_
  std::unique_ptr<HttpClient> client_;
  StoreOptions options_;
};

// http:// or https:// root. Errors: kInvalidArgument for a malformed URL.
Result<std::unique_ptr<Store>> OpenWebStore(std::string_view url,
                                            boost::asio::any_io_executor executor,
                                            const StoreOptions& options);

}  // namespace sluice
