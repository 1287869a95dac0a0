// A CredentialSource for tests of the chain and the shared credential: it
// answers from a script of results, counts its calls, and hands out keys
// numbered by call ("key-1", "key-2", ...). Not a fake of any service.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "stores/credentials/credential_source.h"

namespace sluice::testing {

class ScriptedSource : public CredentialSource {
 public:
  // `answer(call, now)` decides each Fetch (call counts from 1).
  using Answer = std::function<Result<Credential>(int call, int64_t now)>;
  ScriptedSource(std::string name, Answer answer)
      : name_(std::move(name)), answer_(std::move(answer)) {}
  std::string name() const override { return name_; }
  Result<Credential> Fetch(int64_t now) override { return answer_(++calls_, now); }
  int calls() const { return calls_; }

 private:
  std::string name_;
  Answer answer_;
  std::atomic<int> calls_{0};
};

// A credential "key-<call>" from `source`, expiring `lifetime` seconds after
// `now` (none when lifetime < 0).
inline Credential NumberedCredential(const std::string& source, int call, int64_t now,
                                     int64_t lifetime) {
  Credential c;
  c.source = source;
  c.keys.access_key_id = "key-" + std::to_string(call);
  c.keys.secret_access_key = "secret-" + std::to_string(call);
  if (lifetime >= 0) c.expires_at = now + lifetime;
  return c;
}

}  // namespace sluice::testing
