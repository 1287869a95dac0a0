#include "tests/formats/dataset/parquet_fixture_values.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/bytes.h"
#include "formats/mds/float16.h"

namespace sluice::testing {
namespace {

// Width and kind ('i' signed, 'u' unsigned, 'f' float, 'b' bool) of a
// fixed-width scalar encoding; width 0 otherwise.
std::pair<size_t, char> Fixed(std::string_view e) {
  if (e == "bool") return {1, 'b'};
  if (e == "int8") return {1, 'i'};
  if (e == "int16") return {2, 'i'};
  if (e == "int32" || e == "date32" || e.starts_with("time32")) return {4, 'i'};
  if (e == "int64" || e.starts_with("timestamp[") || e.starts_with("time64")) return {8, 'i'};
  if (e == "uint8") return {1, 'u'};
  if (e == "uint16") return {2, 'u'};
  if (e == "uint32") return {4, 'u'};
  if (e == "uint64") return {8, 'u'};
  if (e == "float16") return {2, 'f'};
  if (e == "float32") return {4, 'f'};
  if (e == "float64") return {8, 'f'};
  return {0, 0};
}

JsonValue Scalar(std::pair<size_t, char> t, const char* p) {
  const auto [width, kind] = t;
  if (kind == 'b') return JsonValue{p[0] != 0};
  if (kind == 'f') {
    double d = 0;
    if (width == 2) d = HalfToDouble(LoadLE<uint16_t>(p));
    if (width == 4) d = LoadLE<float>(p);
    if (width == 8) d = LoadLE<double>(p);
    return JsonValue{PyFloatRepr(d)};
  }
  if (kind == 'u') {
    uint64_t v = 0;
    std::memcpy(&v, p, width);
    if (v > static_cast<uint64_t>(INT64_MAX)) return JsonValue{JsonValue::BigInt{std::to_string(v)}};
    return JsonValue{static_cast<int64_t>(v)};
  }
  int64_t v = 0;
  if (width == 1) v = static_cast<int8_t>(p[0]);
  if (width == 2) v = LoadLE<int16_t>(p);
  if (width == 4) v = LoadLE<int32_t>(p);
  if (width == 8) v = LoadLE<int64_t>(p);
  return JsonValue{v};
}

// JSON text's numbers as the fixtures spell them: floats as repr strings.
void FloatsAsRepr(JsonValue* v) {
  if (auto* d = std::get_if<double>(&v->v)) {
    v->v = PyFloatRepr(*d);
  } else if (auto* a = std::get_if<JsonValue::Array>(&v->v)) {
    for (JsonValue& x : *a) FloatsAsRepr(&x);
  }
}

}  // namespace

Result<JsonValue> ParquetFieldAsExpected(std::string_view e, std::string_view bytes) {
  if (bytes.data() == nullptr) {
    if (!bytes.empty()) return InternalError("null pointer with a size");
    return JsonValue{};
  }
  if (e.starts_with("list<")) {
    const std::string_view element = e.substr(5, e.size() - 6);
    const auto t = Fixed(element);
    if (t.first == 0) {
      SLUICE_ASSIGN_OR_RETURN(JsonValue v, ParsePyJson(bytes));
      FloatsAsRepr(&v);
      return v;
    }
    if (bytes.size() % t.first != 0) return CorruptError("packed list of a partial value");
    JsonValue::Array items;
    for (size_t at = 0; at < bytes.size(); at += t.first) items.push_back(Scalar(t, bytes.data() + at));
    return JsonValue{std::move(items)};
  }
  const auto t = Fixed(e);
  if (t.first != 0) {
    if (bytes.size() != t.first) {
      return CorruptError(std::string(e) + " field of " + std::to_string(bytes.size()) + " bytes");
    }
    return Scalar(t, bytes.data());
  }
  if (e == "str" || e.starts_with("decimal(")) return JsonValue{std::string(bytes)};
  if (e == "bytes") return JsonValue{JsonValue::Object{{"hex", JsonValue{HexEncode(bytes)}}}};
  return UnimplementedError("encoding " + std::string(e));
}

std::string EncodingOfArrowType(std::string_view a) {
  for (std::string_view list : {"large_list<", "list<", "fixed_size_list<"}) {
    if (!a.starts_with(list)) continue;
    // "<name>: <type>[ not null]>[N]"
    std::string_view inner = a.substr(list.size());
    inner = inner.substr(inner.find(": ") + 2);
    inner = inner.substr(0, inner.rfind('>'));
    if (inner.ends_with(" not null")) inner.remove_suffix(9);
    return "list<" + EncodingOfArrowType(inner) + ">";
  }
  if (a == "halffloat") return "float16";
  if (a == "float") return "float32";
  if (a == "double") return "float64";
  if (a == "string" || a == "large_string") return "str";
  if (a == "binary" || a == "large_binary" || a.starts_with("fixed_size_binary")) return "bytes";
  if (a == "date32[day]") return "date32";
  if (a.starts_with("timestamp[")) {
    const std::string unit(a.substr(10, 2));
    return "timestamp[" + unit + (a.find("tz=") != std::string_view::npos ? ",UTC]" : "]");
  }
  if (a.starts_with("decimal128(")) {
    std::string d(a.substr(std::string_view("decimal128").size()));
    d.erase(std::remove(d.begin(), d.end(), ' '), d.end());
    return "decimal" + d;
  }
  return std::string(a);
}

std::string DumpForTest(const JsonValue& v) {
  Result<std::string> s = DumpPyJson(v, false);
  return s.ok() ? *s : "<" + s.status().ToString() + ">";
}

std::vector<std::string> ParquetFixtureNames() {
  const std::string dir = std::string(SLUICE_TEST_DATA_DIR) + "/parquet";
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string rel = std::filesystem::relative(e.path(), dir).string();
    if (rel.ends_with(".expected.json") && !rel.starts_with("bad_")) names.push_back(rel);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ParquetFixtureTestName(const std::string& rel) {
  std::string n = rel.substr(0, rel.size() - std::string(".expected.json").size());
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

}  // namespace sluice::testing
