#include "tests/stores/common/node_servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "tests/stores/http/test_servers.h"

namespace sluice::testing {
namespace {

const std::string kServersDir = std::string(SLUICE_SOURCE_DIR) + "/tests/servers";

bool PortOpen(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

// `start` on a FreePort, again on another when the server exits at once
// (as it does when another suite's server took the port first).
std::unique_ptr<NodeServer> StartOnFreePort(
    const std::function<std::unique_ptr<NodeServer>(int port)>& start) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (auto server = start(FreePort())) return server;
  }
  return nullptr;
}

}  // namespace

std::string NodeServersUnavailableReason() {
  if (Shell("node --version >/dev/null 2>&1") != 0) return "node is not installed";
  if (access((kServersDir + "/node_modules/@20minutes/s3rver/package.json").c_str(), R_OK) != 0 ||
      access((kServersDir + "/node_modules/azurite/package.json").c_str(), R_OK) != 0) {
    return "tests/servers/node_modules is missing: run ./dev deps (npm install)";
  }
  return "";
}

std::unique_ptr<NodeServer> NodeServer::Start(const std::vector<std::string>& argv, int port,
                                              const std::string& log_path,
                                              const std::vector<std::string>& env) {
  std::unique_ptr<NodeServer> server(new NodeServer());
  server->port_ = port;
  server->log_path_ = log_path;
  pid_t pid = ::fork();
  if (pid < 0) return nullptr;
  if (pid == 0) {
    int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::setpgid(0, 0);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  server->pid_ = pid;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    // Its own socket: the port may have gone to another suite's server.
    if (ListensOn(pid, port) && PortOpen(port)) return server;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      server->pid_ = -1;
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return nullptr;  // the destructor stops it
}

NodeServer::~NodeServer() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
}

std::string NodeServer::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<NodeServer> StartS3rver(const std::string& dir, const std::string& key_id,
                                        const std::string& secret,
                                        const std::vector<std::string>& buckets) {
  Shell("mkdir -p '" + dir + "/s3rver-data'");
  return StartOnFreePort([&](int port) {
    std::vector<std::string> argv = {"node", kServersDir + "/s3rver_launch.js",
                                     std::to_string(port), dir + "/s3rver-data", key_id, secret};
    for (const auto& b : buckets) argv.push_back(b);
    // s3rver's continuation tokens use DES, which Node 20 only has in
    // OpenSSL's legacy provider.
    return NodeServer::Start(argv, port, dir + "/s3rver.log",
                             {"NODE_OPTIONS=--openssl-legacy-provider"});
  });
}

std::unique_ptr<NodeServer> StartAzurite(const std::string& dir,
                                         const std::vector<std::string>& extra_args) {
  Shell("mkdir -p '" + dir + "/azurite-data'");
  return StartOnFreePort([&](int port) {
    std::vector<std::string> argv = {
        "node",           kServersDir + "/node_modules/azurite/dist/src/blob/main.js",
        "--blobHost",     "127.0.0.1",
        "--blobPort",     std::to_string(port),
        "--location",     dir + "/azurite-data",
        "--disableTelemetry", "--skipApiVersionCheck", "--loose", "--silent"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    return NodeServer::Start(argv, port, dir + "/azurite.log");
  });
}

std::map<std::string, std::optional<std::string>> CleanStoreEnv() {
  std::map<std::string, std::optional<std::string>> env;
  for (const char* name :
       {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
        "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
        "S3_ENDPOINT_URL", "S3_ADDRESSING_STYLE", "S3_UNSIGNED", "AWS_NO_SIGN_REQUEST",
        "MOSAICML_STREAMING_AWS_REQUESTER_PAYS", "OCI_NAMESPACE", "OCI_REGION",
        "OCI_ENDPOINT_URL", "GCS_KEY", "GCS_SECRET", "GCS_ENDPOINT_URL",
        "GOOGLE_APPLICATION_CREDENTIALS", "GCE_METADATA_HOST", "AZURE_ACCOUNT_NAME",
        "AZURE_ACCOUNT_ACCESS_KEY", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_SAS_TOKEN", "AZURE_BLOB_ENDPOINT",
        "DATABRICKS_HOST", "DATABRICKS_TOKEN", "SLUICE_HTTP_BEARER_TOKEN",
        // The rest of the AWS credential chain (stores/credentials).
        "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
        "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_ENDPOINT_URL_STS", "AWS_STS_REGIONAL_ENDPOINTS",
        "AWS_SDK_LOAD_CONFIG", "AWS_ENDPOINT_URL_SSO", "AWS_ENDPOINT_URL_SSO_OIDC",
        // Azure's bearer-token sources (DefaultAzureCredential's variables).
        "AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET",
        "AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST",
        "AZURE_POD_IDENTITY_AUTHORITY_HOST", "IDENTITY_ENDPOINT", "IDENTITY_HEADER",
        "IDENTITY_SERVER_THUMBPRINT", "IMDS_ENDPOINT", "MSI_ENDPOINT", "MSI_SECRET",
        // A Databricks runtime's marker and google-id's account and IAM endpoint.
        "DATABRICKS_RUNTIME_VERSION", "DATABRICKS_GOOGLE_SERVICE_ACCOUNT", "DATABRICKS_METADATA_SERVICE_URL", "DATABRICKS_GROUP_ID",
        "SLUICE_GCP_IAM_CREDENTIALS_ENDPOINT"}) {
    env[name] = std::nullopt;
  }
  // Never the EC2 metadata address, even on a CI runner that is an EC2
  // instance: tests send packets to 127.0.0.1 only.
  env["AWS_EC2_METADATA_DISABLED"] = "true";
  env["SLUICE_AZURE_METADATA_DISABLED"] = "true";  // nor Azure's (CI runners are Azure VMs)
  // Nor the machine's Azure CLI, PowerShell or azd login.
  env["SLUICE_AZURE_CLI"] = "/nonexistent/az";
  env["SLUICE_AZURE_POWERSHELL"] = "/nonexistent/pwsh";
  env["SLUICE_AZURE_DEVELOPER_CLI"] = "/nonexistent/azd";
  // Nor the machine's Databricks CLI login.
  env["DATABRICKS_CLI_PATH"] = "/nonexistent/databricks";
  // No ~/.aws files of the machine running the tests.
  env["AWS_SHARED_CREDENTIALS_FILE"] = "/nonexistent/credentials";
  env["AWS_CONFIG_FILE"] = "/nonexistent/config";
  // Nor gcloud's application default credentials file.
  env["CLOUDSDK_CONFIG"] = "/nonexistent/gcloud";
  env["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES"] = std::nullopt;
  // The Hugging Face Hub: no token of the machine's, never huggingface.co.
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HOME", "XDG_CACHE_HOME",
                           "HF_HUB_DISABLE_IMPLICIT_TOKEN"}) {
    env[name] = std::nullopt;
  }
  env["HF_TOKEN_PATH"] = "/nonexistent/hf-token";
  // Databricks: no ~/.databrickscfg of the machine's, no other credential.
  for (const char* name : {"DATABRICKS_CLIENT_ID", "DATABRICKS_CLIENT_SECRET", "DATABRICKS_USERNAME",
                           "DATABRICKS_PASSWORD", "DATABRICKS_DISCOVERY_URL", "DATABRICKS_AUTH_TYPE",
                           "DATABRICKS_CONFIG_PROFILE", "ARM_CLIENT_ID", "ARM_CLIENT_SECRET", "ARM_TENANT_ID",
                           "DATABRICKS_AZURE_RESOURCE_ID", "SLUICE_DATABRICKS_ENTRA_ENDPOINT",
                           "DATABRICKS_TOKEN_AUDIENCE", "DATABRICKS_OIDC_TOKEN", "DATABRICKS_OIDC_TOKEN_ENV",
                           "DATABRICKS_OIDC_TOKEN_FILEPATH", "DATABRICKS_OIDC_TOKEN_FILE",
                           "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
                           "DATABRICKS_RUNTIME_VERSION", "GOOGLE_CREDENTIALS", "DATABRICKS_ACCOUNT_ID",
                           "DATABRICKS_GROUP_ID", "DATABRICKS_METADATA_SERVICE_URL", "SYSTEM_ACCESSTOKEN",
                           "SYSTEM_TEAMFOUNDATIONCOLLECTIONURI", "SYSTEM_TEAMPROJECTID", "SYSTEM_PLANID",
                           "SYSTEM_JOBID", "SYSTEM_HOSTTYPE", "IS_IN_DB_MODEL_SERVING_ENV",
                           "IS_IN_DATABRICKS_MODEL_SERVING_ENV", "SERVING_CREDENTIALS_DIR",
                           "DATABRICKS_MODEL_SERVING_HOST_URL", "DB_MODEL_SERVING_HOST_URL"}) {
    env[name] = std::nullopt;
  }
  env["DATABRICKS_CONFIG_FILE"] = "/nonexistent/databrickscfg";
  // No `databricks` program of the machine's (the databricks-cli strategy).
  env["DATABRICKS_CLI_PATH"] = "/nonexistent/databricks";
  // OCI's native API: no profile of the machine's (~/.oci/config wins over
  // OCI_CONFIG_FILE, so tests that use one also point HOME elsewhere).
  env["OCI_CONFIG_FILE"] = "/nonexistent/oci-config";
  env["OCI_CLI_PROFILE"] = std::nullopt;
  env["OCI_CLI_AUTH"] = std::nullopt;
  env["SLUICE_OCI_OBJECT_STORAGE_ENDPOINT"] = std::nullopt;
  for (const char* name : {"OCI_RESOURCE_PRINCIPAL_VERSION", "OCI_RESOURCE_PRINCIPAL_RPST",
                           "OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM",
                           "OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE",
                           "OCI_RESOURCE_PRINCIPAL_REGION", "OCI_METADATA_BASE_URL",
                           "SLUICE_OCI_FEDERATION_ENDPOINT"}) {
    env[name] = std::nullopt;
  }
  env["HF_ENDPOINT"] = "http://127.0.0.1:9";
  return env;
}

std::map<std::string, std::optional<std::string>> S3rverEnv(int port, const std::string& key_id,
                                                            const std::string& secret) {
  auto env = CleanStoreEnv();
  env["AWS_ACCESS_KEY_ID"] = key_id;
  env["AWS_SECRET_ACCESS_KEY"] = secret;
  env["S3_ENDPOINT_URL"] = "http://127.0.0.1:" + std::to_string(port);
  return env;
}

}  // namespace sluice::testing
