// A recursive-descent parser for Python's json.loads dialect. simdjson
// rejects NaN/Infinity and integers beyond 64 bits, both of which Python
// writes, so values read back from shards go through this small parser.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>
#include <unordered_map>

#include "formats/json/py_json.h"
#include "formats/json/py_number_text.h"

namespace sluice {
namespace {

// CPython refuses int() of more than this many digits.
constexpr size_t kMaxIntDigits = kPyIntMaxStrDigits;
// Objects larger than this index their keys to resolve duplicates.
constexpr size_t kLinearKeyScan = 16;

void AppendUtf8(std::string& out, uint32_t cp) {
  // Lone surrogates (from \ud800-style escapes) are kept as their 3-byte
  // generalized UTF-8 form, as a Python str would keep them.
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Result<JsonValue> ParseDocument() {
    SkipWs();
    JsonValue v;
    SLUICE_RETURN_IF_ERROR(ParseValue(v, 0));
    SkipWs();
    if (pos_ != s_.size()) return Error("extra data after the JSON value");
    return v;
  }

 private:
  Status Error(std::string what) const {
    return CorruptError("JSON at byte offset " + std::to_string(pos_) + ": " + std::move(what));
  }

  void SkipWs() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(std::string_view lit) {
    if (s_.substr(pos_, lit.size()) == lit) {
      pos_ += lit.size();
      return true;
    }
    return false;
  }

  Status ParseValue(JsonValue& out, int depth) {
    if (pos_ >= s_.size()) return Error("expected a value, got end of input");
    switch (s_[pos_]) {
      case '{': return ParseObject(out, depth);
      case '[': return ParseArray(out, depth);
      case '"': {
        std::string str;
        SLUICE_RETURN_IF_ERROR(ParseString(str));
        out.v = std::move(str);
        return Status::Ok();
      }
      case 'n':
        if (Consume("null")) { out.v = nullptr; return Status::Ok(); }
        break;
      case 't':
        if (Consume("true")) { out.v = true; return Status::Ok(); }
        break;
      case 'f':
        if (Consume("false")) { out.v = false; return Status::Ok(); }
        break;
      case 'N':
        if (Consume("NaN")) { out.v = std::nan(""); return Status::Ok(); }
        break;
      case 'I':
        if (Consume("Infinity")) { out.v = HUGE_VAL; return Status::Ok(); }
        break;
      case '-':
        if (Consume("-Infinity")) { out.v = -HUGE_VAL; return Status::Ok(); }
        return ParseNumber(out);
      default:
        if (s_[pos_] >= '0' && s_[pos_] <= '9') return ParseNumber(out);
        break;
    }
    return Error("expected a value");
  }

  Status ParseObject(JsonValue& out, int depth) {
    if (depth >= kPyJsonMaxDepth) return Error("nesting deeper than " + std::to_string(kPyJsonMaxDepth));
    ++pos_;  // '{'
    JsonValue::Object obj;
    std::unordered_map<std::string, size_t> index;  // used past kLinearKeyScan keys
    SkipWs();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      out.v = std::move(obj);
      return Status::Ok();
    }
    while (true) {
      SkipWs();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Error("expected a property name in double quotes");
      std::string key;
      SLUICE_RETURN_IF_ERROR(ParseString(key));
      SkipWs();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Error("expected ':' after a property name");
      ++pos_;
      SkipWs();
      JsonValue value;
      SLUICE_RETURN_IF_ERROR(ParseValue(value, depth + 1));
      // A repeated key behaves as in a Python dict: the first position, the
      // last value.
      size_t found = obj.size();
      if (obj.size() <= kLinearKeyScan) {
        for (size_t k = 0; k < obj.size(); ++k) {
          if (obj[k].first == key) { found = k; break; }
        }
      } else {
        if (index.empty()) {
          for (size_t k = 0; k < obj.size(); ++k) index.emplace(obj[k].first, k);
        }
        auto it = index.find(key);
        if (it != index.end()) found = it->second;
      }
      if (found < obj.size()) {
        obj[found].second = std::move(value);
      } else {
        if (!index.empty()) index.emplace(key, obj.size());
        obj.emplace_back(std::move(key), std::move(value));
      }
      SkipWs();
      if (pos_ >= s_.size()) return Error("expected ',' or '}', got end of input");
      if (s_[pos_] == ',') { ++pos_; continue; }
      if (s_[pos_] == '}') { ++pos_; break; }
      return Error("expected ',' or '}'");
    }
    out.v = std::move(obj);
    return Status::Ok();
  }

  Status ParseArray(JsonValue& out, int depth) {
    if (depth >= kPyJsonMaxDepth) return Error("nesting deeper than " + std::to_string(kPyJsonMaxDepth));
    ++pos_;  // '['
    JsonValue::Array arr;
    SkipWs();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      out.v = std::move(arr);
      return Status::Ok();
    }
    while (true) {
      SkipWs();
      arr.emplace_back();
      SLUICE_RETURN_IF_ERROR(ParseValue(arr.back(), depth + 1));
      SkipWs();
      if (pos_ >= s_.size()) return Error("expected ',' or ']', got end of input");
      if (s_[pos_] == ',') { ++pos_; continue; }
      if (s_[pos_] == ']') { ++pos_; break; }
      return Error("expected ',' or ']'");
    }
    out.v = std::move(arr);
    return Status::Ok();
  }

  Status ParseHex4(uint32_t& unit) {
    if (pos_ + 4 > s_.size()) return Error("truncated \\u escape");
    unit = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = s_[pos_ + k];
      uint32_t d;
      if (c >= '0' && c <= '9') d = static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') d = static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') d = static_cast<uint32_t>(c - 'A' + 10);
      else return Error("invalid \\u escape");
      unit = (unit << 4) | d;
    }
    pos_ += 4;
    return Status::Ok();
  }

  // Raw bytes must be strict UTF-8 (Python decodes the text first).
  Status CopyUtf8Sequence(std::string& out) {
    const auto c = static_cast<unsigned char>(s_[pos_]);
    size_t len;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return Error("invalid UTF-8 byte");
    if (pos_ + len > s_.size()) return Error("truncated UTF-8 sequence");
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s_[pos_ + k]);
      if ((cc & 0xc0) != 0x80) return Error("invalid UTF-8 continuation byte");
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return Error("invalid UTF-8 sequence");
    }
    out.append(s_.data() + pos_, len);
    pos_ += len;
    return Status::Ok();
  }

  Status ParseString(std::string& out) {
    ++pos_;  // opening quote
    while (true) {
      size_t run = pos_;
      while (run < s_.size()) {
        const auto c = static_cast<unsigned char>(s_[run]);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++run;
      }
      out.append(s_.data() + pos_, run - pos_);
      pos_ = run;
      if (pos_ >= s_.size()) return Error("unterminated string");
      const auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') { ++pos_; return Status::Ok(); }
      if (c < 0x20) return Error("invalid control character in string");
      if (c >= 0x80) {
        SLUICE_RETURN_IF_ERROR(CopyUtf8Sequence(out));
        continue;
      }
      // Backslash escape.
      ++pos_;
      if (pos_ >= s_.size()) return Error("unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          uint32_t unit = 0;
          SLUICE_RETURN_IF_ERROR(ParseHex4(unit));
          if (unit >= 0xd800 && unit <= 0xdbff && s_.substr(pos_, 2) == "\\u") {
            const size_t save = pos_;
            pos_ += 2;
            uint32_t low = 0;
            SLUICE_RETURN_IF_ERROR(ParseHex4(low));
            if (low >= 0xdc00 && low <= 0xdfff) {
              unit = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
            } else {
              pos_ = save;  // not a pair: the next escape stands alone
            }
          }
          AppendUtf8(out, unit);
          break;
        }
        default:
          pos_ -= 2;  // point at the backslash, as Python does
          return Error("invalid escape");
      }
    }
  }

  Status ParseNumber(JsonValue& out) {
    const size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    const size_t int_start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (pos_ < s_.size() && s_[pos_] >= '1' && s_[pos_] <= '9') {
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    } else {
      return Error("expected a digit");
    }
    const size_t int_end = pos_;
    bool is_float = false;
    size_t frac_start = pos_, frac_end = pos_;
    if (pos_ + 1 < s_.size() && s_[pos_] == '.' && s_[pos_ + 1] >= '0' && s_[pos_ + 1] <= '9') {
      is_float = true;
      ++pos_;
      frac_start = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      frac_end = pos_;
    }
    int64_t exp = 0;
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      bool exp_neg = false;
      if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) exp_neg = s_[p++] == '-';
      if (p < s_.size() && s_[p] >= '0' && s_[p] <= '9') {
        is_float = true;
        while (p < s_.size() && s_[p] >= '0' && s_[p] <= '9') {
          if (exp < 1000000000) exp = exp * 10 + (s_[p] - '0');  // saturate
          ++p;
        }
        if (exp_neg) exp = -exp;
        pos_ = p;
      }
      // else: like Python's regex, the number ends before the 'e', and the
      // caller reports the stray character.
    }
    const std::string_view text = s_.substr(start, pos_ - start);
    if (!is_float) {
      if (int_end - int_start > kMaxIntDigits) {
        pos_ = start;
        return Error("integer longer than " + std::to_string(kMaxIntDigits) + " digits");
      }
      int64_t iv;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), iv);
      if (r.ec == std::errc() && r.ptr == text.data() + text.size()) {
        out.v = iv;
      } else {
        out.v = JsonValue::BigInt{std::string(text)};
      }
      return Status::Ok();
    }
    double dv = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), dv);
    if (r.ec == std::errc::result_out_of_range) {
      // Overflow (>~1.8e308) and underflow (<~2.5e-324) are hundreds of
      // decades apart, so the decimal magnitude tells which one it was.
      int64_t mag = 0;
      size_t k = int_start;
      while (k < int_end && s_[k] == '0') ++k;
      if (k < int_end) {
        mag = static_cast<int64_t>(int_end - k) - 1;
      } else {
        size_t f = frac_start;
        while (f < frac_end && s_[f] == '0') ++f;
        mag = -static_cast<int64_t>(f - frac_start) - 1;
      }
      mag += exp;
      const bool negative = s_[start] == '-';
      if (mag >= 0) dv = negative ? -HUGE_VAL : HUGE_VAL;
      else dv = negative ? -0.0 : 0.0;
    } else if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
      pos_ = start;
      return Error("invalid number");
    }
    out.v = dv;
    return Status::Ok();
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Result<JsonValue> ParsePyJson(std::string_view text) { return Parser(text).ParseDocument(); }

const JsonValue* JsonMember(const JsonValue& value, std::string_view key) {
  const auto* object = std::get_if<JsonValue::Object>(&value.v);
  if (object == nullptr) return nullptr;
  for (const auto& [k, member] : *object) {
    if (k == key) return &member;
  }
  return nullptr;
}

std::string JsonStringMember(const JsonValue& value, std::string_view key) {
  const JsonValue* m = JsonMember(value, key);
  const auto* s = m ? std::get_if<std::string>(&m->v) : nullptr;
  return s ? *s : std::string();
}

}  // namespace sluice
