#include "stores/credentials/hf_token.h"

#include "base/file.h"
#include "stores/common/store_keys.h"

namespace sluice {
namespace {

// huggingface_hub's _clean_token: line breaks removed, then trimmed.
std::string CleanToken(std::string_view raw) {
  std::string s;
  for (char c : raw) {
    if (c != '\r' && c != '\n') s += c;
  }
  const size_t a = s.find_first_not_of(" \t\f\v");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\f\v");
  return s.substr(a, b - a + 1);
}

std::string ExpandHome(std::string path) {
  if (path == "~" || path.rfind("~/", 0) == 0) {
    if (auto home = GetEnv("HOME"); home && !home->empty()) return *home + path.substr(1);
  }
  return path;
}

class HfEnvTokenSource final : public CredentialSource {
 public:
  std::string name() const override { return "environment"; }

  Result<Credential> Fetch(int64_t /*now*/) override {
    for (const char* var : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
      auto value = GetEnv(var);
      if (!value) continue;
      std::string token = CleanToken(*value);
      if (token.empty()) continue;
      Credential out;
      out.source = std::string("environment (") + var + ")";
      out.bearer = std::move(token);
      return out;
    }
    return NotFoundError("HF_TOKEN not set");
  }
};

class HfTokenFileSource final : public CredentialSource {
 public:
  std::string name() const override { return "token file"; }

  Result<Credential> Fetch(int64_t /*now*/) override {
    const std::string path = HfTokenFilePath();
    if (path.empty()) return NotFoundError("neither HF_TOKEN_PATH, HF_HOME nor HOME set");
    if (!FileExists(path)) return NotFoundError(path + " does not exist");
    // A token is some 40 bytes; a bigger file is not one.
    auto text = ReadFile(path, uint64_t{1} << 16);
    if (!text.ok()) {
      return PermissionDeniedError("cannot read the Hugging Face token file " + path + ": " +
                                   text.status().message());
    }
    std::string token = CleanToken(*text);
    if (token.empty()) return NotFoundError(path + " is empty");
    Credential out;
    out.source = "token file " + path;
    out.bearer = std::move(token);
    return out;
  }
};

}  // namespace

std::string HfTokenFilePath() {
  if (auto p = GetEnv("HF_TOKEN_PATH"); p && !p->empty()) return ExpandHome(*p);
  if (auto home = GetEnv("HF_HOME"); home && !home->empty()) {
    return ExpandHome(*home) + "/token";
  }
  if (auto cache = GetEnv("XDG_CACHE_HOME"); cache && !cache->empty()) {
    return ExpandHome(*cache) + "/huggingface/token";
  }
  if (auto home = GetEnv("HOME"); home && !home->empty()) {
    return *home + "/.cache/huggingface/token";
  }
  return "";
}

std::unique_ptr<CredentialChain> MakeHfTokenChain() {
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(std::make_unique<HfEnvTokenSource>());
  sources.push_back(std::make_unique<HfTokenFileSource>());
  return std::make_unique<CredentialChain>("Hugging Face token", std::move(sources));
}

}  // namespace sluice
