// Static keys of an AWS profile section (aws_access_key_id,
// aws_secret_access_key, aws_session_token), shared by the credentials-file
// and config-file sources and by role_arn's source_profile. Pure.
#pragma once

#include <string>

#include "base/status.h"
#include "stores/credentials/aws_settings.h"
#include "stores/credentials/credential.h"

namespace sluice {

// The keys of `section` (may be null) as a Credential from `source`.
// kNotFound "<why>" when the section has neither key; kPermissionDenied
// naming profile and file when it has only one.
Result<Credential> AwsProfileKeys(const IniSection* section, const std::string& profile,
                                  const std::string& path, const std::string& source);

}  // namespace sluice
