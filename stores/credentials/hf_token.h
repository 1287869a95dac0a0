// Where a Hugging Face Hub token comes from, as huggingface_hub's
// get_token() finds it, in its order:
//   1. the environment: HF_TOKEN, else HUGGING_FACE_HUB_TOKEN (legacy);
//   2. the token file `hf auth login` writes: HF_TOKEN_PATH, else
//      $HF_HOME/token, else $XDG_CACHE_HOME/huggingface/token, else
//      ~/.cache/huggingface/token.
// Values are trimmed and their line breaks removed; an empty one does not
// apply. Not read: HF_OIDC_RESOURCE (Trusted Publishers' token exchange) and
// Colab's secret vault. Hub tokens do not expire by themselves, so the
// credential has no expiry.
//
// Thread safety: as CredentialChain (one Fetch at a time); the functions are
// thread-safe as long as nobody changes the environment meanwhile.
#pragma once

#include <memory>
#include <string>

#include "stores/credentials/credential_chain.h"

namespace sluice {

// The token file's path by the rules above; "" when neither a variable nor
// HOME names one. A leading "~/" is the home folder.
std::string HfTokenFilePath();

// The chain of the two sources above ("Hugging Face token"); the credential's
// `bearer` is the token and its `source` says which variable or file.
std::unique_ptr<CredentialChain> MakeHfTokenChain();

}  // namespace sluice
