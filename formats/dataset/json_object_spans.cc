#include "formats/dataset/json_object_spans.h"

#include "formats/json/py_json.h"

namespace sluice {
namespace {

class Scanner {
 public:
  Scanner(std::string_view text, std::string_view what) : s_(text), what_(what) {}

  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek() const { return s_[pos_]; }
  size_t pos() const { return pos_; }

  Status Expect(char c) {
    SkipSpace();
    if (AtEnd() || s_[pos_] != c) return Error(std::string("expected '") + c + "'");
    ++pos_;
    return Status::Ok();
  }

  // A string literal starting at pos_; returns its text including quotes.
  Result<std::string_view> String() {
    size_t start = pos_;
    if (AtEnd() || s_[pos_] != '"') return Error("expected a string");
    ++pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '\\') {
        if (pos_ >= s_.size()) break;
        ++pos_;
      } else if (c == '"') {
        return s_.substr(start, pos_ - start);
      }
    }
    return Error("unterminated string");
  }

  // One value of any kind; returns its text.
  Result<std::string_view> Value() {
    SkipSpace();
    size_t start = pos_;
    if (AtEnd()) return Error("expected a value");
    char c = s_[pos_];
    if (c == '"') return String();
    if (c == '{' || c == '[') {
      int depth = 0;
      while (pos_ < s_.size()) {
        char d = s_[pos_];
        if (d == '"') {
          SLUICE_RETURN_IF_ERROR(String().status());
          continue;
        }
        ++pos_;
        if (d == '{' || d == '[') ++depth;
        if (d == '}' || d == ']') {
          if (--depth == 0) return s_.substr(start, pos_ - start);
        }
      }
      return Error("unterminated container");
    }
    // number, true, false, null, NaN, Infinity, -Infinity
    while (pos_ < s_.size()) {
      char d = s_[pos_];
      if (d == ',' || d == '}' || d == ']' || d == ' ' || d == '\n' || d == '\r' || d == '\t') break;
      ++pos_;
    }
    if (pos_ == start) return Error("expected a value");
    return s_.substr(start, pos_ - start);
  }

  Status Error(const std::string& what) const {
    return CorruptError(std::string(what_) + ": malformed JSON object at byte " +
                        std::to_string(pos_) + ": " + what);
  }

 private:
  std::string_view s_;
  std::string_view what_;
  size_t pos_ = 0;
};

}  // namespace

Result<std::vector<std::pair<std::string, std::string_view>>> JsonObjectMemberSpans(
    std::string_view text, std::string_view what) {
  Scanner sc(text, what);
  std::vector<std::pair<std::string, std::string_view>> out;
  SLUICE_RETURN_IF_ERROR(sc.Expect('{'));
  sc.SkipSpace();
  if (!sc.AtEnd() && sc.Peek() == '}') {
    SLUICE_RETURN_IF_ERROR(sc.Expect('}'));
  } else {
    while (true) {
      sc.SkipSpace();
      SLUICE_ASSIGN_OR_RETURN(std::string_view key_text, sc.String());
      SLUICE_ASSIGN_OR_RETURN(JsonValue key, ParsePyJson(key_text));
      SLUICE_RETURN_IF_ERROR(sc.Expect(':'));
      SLUICE_ASSIGN_OR_RETURN(std::string_view value, sc.Value());
      out.emplace_back(std::get<std::string>(key.v), value);
      sc.SkipSpace();
      if (sc.AtEnd()) return sc.Error("unterminated object");
      if (sc.Peek() == ',') {
        SLUICE_RETURN_IF_ERROR(sc.Expect(','));
        continue;
      }
      SLUICE_RETURN_IF_ERROR(sc.Expect('}'));
      break;
    }
  }
  sc.SkipSpace();
  if (!sc.AtEnd()) return sc.Error("unexpected text after the object");
  return out;
}

}  // namespace sluice
