#include "stores/credentials/aws_credential_chain.h"

#include <algorithm>
#include <vector>

#include "stores/common/store_keys.h"
#include "stores/signing/digest.h"

extern char** environ;

namespace sluice {

std::unique_ptr<CredentialChain> MakeAwsCredentialChain(const AwsSettings& settings,
                                                        const AwsEndpointOptions& endpoints) {
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(MakeAwsEnvSource());
  sources.push_back(MakeAwsAssumeRoleSource(settings, endpoints));
  sources.push_back(MakeAwsWebIdentitySource(settings));
  sources.push_back(MakeAwsSsoSource(settings));
  sources.push_back(MakeAwsCredentialsFileSource(settings));
  sources.push_back(MakeAwsProcessSource(settings));
  sources.push_back(MakeAwsConfigFileSource(settings));
  sources.push_back(MakeAwsContainerSource(endpoints));
  sources.push_back(MakeAwsImdsSource(endpoints));
  return std::make_unique<CredentialChain>("AWS credentials", std::move(sources));
}

std::shared_ptr<SharedCredential> AwsSharedCredential(const AwsSettings& settings,
                                                      const AwsEndpointOptions& endpoints) {
  // What decides the credential: every AWS_* variable, the profile files'
  // contents, the endpoints. Hashed: the inputs hold secrets.
  std::vector<std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::string_view(*e).rfind("AWS_", 0) == 0) vars.emplace_back(*e);
  }
  std::sort(vars.begin(), vars.end());
  // HOME locates the default files and the SSO token cache.
  std::string material = "aws\n" + GetEnv("HOME").value_or("") + "\n" + settings.region + "\n" +
                         settings.profile() + "\n" + endpoints.dmi_dir + "\n" +
                         endpoints.container_host + "\n";
  for (const std::string& v : vars) material += v + "\n";
  for (const IniFile* file : {&settings.files.credentials, &settings.files.config}) {
    for (const auto& [section, values] : *file) {
      material += "[" + section + "]\n";
      for (const auto& [k, v] : values) material += k + "=" + v + "\n";
    }
  }
  return SharedCredentialFor(Sha256Hex(material), [&] {
    return std::make_shared<SharedCredential>(MakeAwsCredentialChain(settings, endpoints));
  });
}

}  // namespace sluice
