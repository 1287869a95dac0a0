// Finds the secret values a credential text carries, so that a fuzzer can
// check that no error message quotes them.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::fuzz {

inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Values of `key<sep>value` settings (split on `sep_chars` between
// settings) whose key mentions one of `names`; values of 8+ bytes only, so
// that a short one does not match innocent text by chance.
inline std::vector<std::string> SettingSecrets(std::string_view text, char assign,
                                               std::string_view sep_chars,
                                               std::initializer_list<const char*> names) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of(sep_chars, pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view setting = text.substr(pos, end - pos);
    size_t eq = setting.find(assign);
    if (eq != std::string_view::npos) {
      std::string key = Lower(setting.substr(0, eq));
      std::string_view value = setting.substr(eq + 1);
      while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) {
        value.remove_prefix(1);
      }
      while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) {
        value.remove_suffix(1);
      }
      for (const char* n : names) {
        // A value that occurs twice may be echoed legitimately as the
        // other setting's value (a protocol, say): only unique ones count.
        if (key.find(n) != std::string::npos && value.size() >= 8 &&
            text.find(value) == text.rfind(value)) {
          out.emplace_back(value);
          break;
        }
      }
    }
    pos = end + 1;
  }
  return out;
}

// The string value of JSON member `"name"` as written (escapes kept), if it
// is 8+ bytes without escapes and occurs once in `json` (as in
// SettingSecrets: text repeated in another member may be echoed as that
// member's value).
inline std::vector<std::string> JsonStringSecrets(std::string_view json, std::string_view name) {
  std::vector<std::string> out;
  std::string key = "\"" + std::string(name) + "\"";
  size_t pos = 0;
  while ((pos = json.find(key, pos)) != std::string_view::npos) {
    pos += key.size();
    size_t colon = json.find_first_not_of(" \t\r\n", pos);
    if (colon == std::string_view::npos || json[colon] != ':') continue;
    size_t quote = json.find_first_not_of(" \t\r\n", colon + 1);
    if (quote == std::string_view::npos || json[quote] != '"') continue;
    size_t close = json.find('"', quote + 1);
    if (close == std::string_view::npos) continue;
    std::string_view value = json.substr(quote + 1, close - quote - 1);
    if (value.size() >= 8 && value.find('\\') == std::string_view::npos &&
        json.find(value) == json.rfind(value)) {
      out.emplace_back(value);
    }
  }
  return out;
}

// `secret` with every letter and digit moved to the next one of its class
// (a->b, Z->A, 9->0): the same shape (base64 stays base64), other bytes.
inline std::string Rotate(std::string_view secret) {
  std::string out(secret);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = c == 'z' ? 'a' : static_cast<char>(c + 1);
    else if (c >= 'A' && c <= 'Z') c = c == 'Z' ? 'A' : static_cast<char>(c + 1);
    else if (c >= '0' && c <= '9') c = c == '9' ? '0' : static_cast<char>(c + 1);
  }
  return out;
}

// `text` with every occurrence of `secret` rotated.
inline std::string RotateSecret(std::string_view text, std::string_view secret) {
  std::string out;
  const std::string rotated = Rotate(secret);
  size_t pos = 0;
  for (size_t hit; (hit = text.find(secret, pos)) != std::string_view::npos;
       pos = hit + secret.size()) {
    out.append(text.substr(pos, hit - pos));
    out += rotated;
  }
  out.append(text.substr(pos));
  return out;
}

// Whether an error message quotes `secret`: it holds the secret, and the
// error for the same text with the secret rotated holds the rotated one
// (so the match is an echo of the input, not the message's own words
// happening to contain the secret's letters).
inline bool Echoes(const Status& error, const Status& rotated_error, std::string_view secret) {
  if (secret.empty() || Rotate(secret) == secret) return false;
  return error.message().find(secret) != std::string::npos &&
         rotated_error.message().find(Rotate(secret)) != std::string::npos;
}

}  // namespace sluice::fuzz
