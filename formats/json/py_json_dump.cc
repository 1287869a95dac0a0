// json.dumps(value, sort_keys=...) with Python's default separators.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "formats/json/py_json.h"

namespace sluice {
namespace {

bool IsIntegerText(std::string_view t) {
  if (!t.empty() && t.front() == '-') t.remove_prefix(1);
  if (t.empty()) return false;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
  }
  return t.size() == 1 || t.front() != '0';
}

void AppendFloat(std::string& out, double d) {
  if (std::isnan(d)) out.append("NaN");
  else if (std::isinf(d)) out.append(d < 0 ? "-Infinity" : "Infinity");
  else out.append(PyFloatRepr(d));
}

class Dumper {
 public:
  Dumper(std::string& out, bool sort_keys) : out_(out), sort_keys_(sort_keys) {}

  Status Dump(const JsonValue& value, int depth) {
    if (depth >= kPyJsonMaxDepth) {
      return InvalidArgumentError("JSON value nested deeper than " + std::to_string(kPyJsonMaxDepth));
    }
    switch (value.v.index()) {
      case 0: out_.append("null"); return Status::Ok();
      case 1: out_.append(std::get<bool>(value.v) ? "true" : "false"); return Status::Ok();
      case 2: out_.append(std::to_string(std::get<int64_t>(value.v))); return Status::Ok();
      case 3: {
        const std::string& digits = std::get<JsonValue::BigInt>(value.v).digits;
        if (!IsIntegerText(digits)) {
          return InvalidArgumentError("JSON big integer is not a decimal integer: '" +
                                      digits.substr(0, 64) + "'");
        }
        out_.append(digits);
        return Status::Ok();
      }
      case 4: AppendFloat(out_, std::get<double>(value.v)); return Status::Ok();
      case 5: return AppendPyJsonString(out_, std::get<std::string>(value.v));
      case 6: {
        const auto& arr = std::get<JsonValue::Array>(value.v);
        out_.push_back('[');
        for (size_t i = 0; i < arr.size(); ++i) {
          if (i) out_.append(", ");
          SLUICE_RETURN_IF_ERROR(Dump(arr[i], depth + 1));
        }
        out_.push_back(']');
        return Status::Ok();
      }
      case 7: {
        const auto& obj = std::get<JsonValue::Object>(value.v);
        std::vector<size_t> order(obj.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        // Byte order of UTF-8 equals code point order, which is how Python
        // compares str keys.
        if (sort_keys_) {
          std::stable_sort(order.begin(), order.end(),
                           [&](size_t a, size_t b) { return obj[a].first < obj[b].first; });
        }
        out_.push_back('{');
        for (size_t i = 0; i < order.size(); ++i) {
          if (i) out_.append(", ");
          const auto& [key, val] = obj[order[i]];
          SLUICE_RETURN_IF_ERROR(AppendPyJsonString(out_, key));
          out_.append(": ");
          SLUICE_RETURN_IF_ERROR(Dump(val, depth + 1));
        }
        out_.push_back('}');
        return Status::Ok();
      }
    }
    return InternalError("unhandled JSON value kind");
  }

 private:
  std::string& out_;
  bool sort_keys_;
};

}  // namespace

Result<std::string> DumpPyJson(const JsonValue& value, bool sort_keys) {
  std::string out;
  SLUICE_RETURN_IF_ERROR(Dumper(out, sort_keys).Dump(value, 0));
  return out;
}

}  // namespace sluice
