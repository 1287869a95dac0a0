// NodeServerSuite pieces for suites against azurite: the environment that
// reaches it (a connection string with the well-known dev account) and
// container creation, which the Store interface does not offer. Header-only
// (it needs the stores, which the fixture library does not link); test
// thread only.
#pragma once

#include <ctime>
#include <map>
#include <optional>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "base/status.h"
#include "engine/runtime/event_loop.h"
#include "stores/http/http_client.h"
#include "stores/signing/azure_connection_string.h"
#include "stores/signing/azure_shared_key.h"
#include "stores/signing/signing_time.h"
#include "tests/stores/common/node_servers.h"

namespace sluice::testing {

// The blob endpoint of devstoreaccount1 on an azurite at 127.0.0.1:`port`.
inline std::string AzuriteEndpoint(int port) {
  return "http://127.0.0.1:" + std::to_string(port) + "/devstoreaccount1";
}

// CleanStoreEnv() plus AZURE_STORAGE_CONNECTION_STRING for that endpoint.
inline std::map<std::string, std::optional<std::string>> AzuriteEnv(int port) {
  auto env = CleanStoreEnv();
  env["AZURE_STORAGE_CONNECTION_STRING"] =
      "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" +
      std::string(kAzuriteAccountKey) + ";BlobEndpoint=" + AzuriteEndpoint(port) + ";";
  return env;
}

// Creates container `name` with a SharedKey-signed PUT; one that exists
// already (409) is fine.
// `endpoint`: AzuriteEndpoint(port) unless given (e.g. https).
inline Status CreateAzuriteContainer(EventLoop& loop, int port,
                                     const std::string& name, std::string endpoint = "") {
  if (endpoint.empty()) endpoint = AzuriteEndpoint(port);
  SigningRequest sr;
  sr.method = "PUT";
  sr.path = "/devstoreaccount1/" + name;
  sr.query = {{"restype", "container"}};
  std::string date = FormatHttpDate(std::time(nullptr));
  sr.headers = {{"x-ms-date", date}, {"x-ms-version", "2021-12-02"}, {"Content-Length", "0"}};
  SLUICE_ASSIGN_OR_RETURN(AzureSharedKeySignature sig,
                          SignAzureSharedKey(sr, kAzuriteAccountName, kAzuriteAccountKey));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> client, HttpClient::Create(loop.executor()));
  HttpRequest req;
  req.method = HttpMethod::kPut;
  req.url = endpoint + "/" + name + "?restype=container";
  req.headers = {{"x-ms-date", date}, {"x-ms-version", "2021-12-02"},
                 {"authorization", sig.authorization}};
  auto resp = loop.Run(client->Send(req));
  if (!resp.ok() && resp.status().message().find("409") == std::string::npos) {
    return resp.status();
  }
  return Status::Ok();
}

}  // namespace sluice::testing
