// An OCI API key as the OCI SDK's oci.config.from_file() finds it:
//   the file: ~/.oci/config when it exists, else OCI_CONFIG_FILE, else
//     ~/.oraclebmc/config;
//   the profile: OCI_CLI_PROFILE, else DEFAULT; a profile inherits the
//     DEFAULT section's keys (configparser);
//   keys: user, tenancy, fingerprint, key_file (a leading "~/" is the home
//     folder), pass_phrase, region (else OCI_REGION).
// Reads the environment and files; thread-safe as long as nobody changes the
// environment meanwhile. The key and its passphrase are secrets.
#pragma once

#include <string>

#include "base/status.h"
#include "stores/signing/oci_signature.h"

namespace sluice {

struct OciProfile {
  std::string config_file;  // the file read
  std::string profile;      // the profile used
  std::string region;
  std::string tenancy;
  std::string user;
  std::string fingerprint;
  std::string key_file;
  OciApiKey key;  // key_id "<tenancy>/<user>/<fingerprint>", the PEM and passphrase
};

// The config file's path by the rules above ("" when HOME is unset and
// OCI_CONFIG_FILE too), and whether it exists.
std::string OciConfigPath();

// Errors: kNotFound when the file does not exist; kInvalidArgument for a
// missing profile ("Profile 'X' not found in config file F"), missing keys
// (named), an unreadable key file (named, never its content).
Result<OciProfile> LoadOciProfile();

}  // namespace sluice
