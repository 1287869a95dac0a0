#include "stores/common/xml_lite.h"

#include <cstdlib>

namespace sluice {

std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view name) {
  std::vector<std::string_view> out;
  std::string open = "<" + std::string(name);
  std::string close = "</" + std::string(name) + ">";
  size_t pos = 0;
  while (true) {
    size_t a = xml.find(open, pos);
    if (a == std::string_view::npos) break;
    size_t after = a + open.size();
    if (after >= xml.size()) break;
    char c = xml[after];
    if (c != '>' && c != ' ' && c != '/' && c != '\t' && c != '\n' && c != '\r') {
      pos = after;  // a longer name such as <KeyCount> for <Key>
      continue;
    }
    size_t gt = xml.find('>', after);
    if (gt == std::string_view::npos) break;
    if (xml[gt - 1] == '/') {  // <name/>
      out.push_back(xml.substr(gt + 1, 0));
      pos = gt + 1;
      continue;
    }
    size_t b = xml.find(close, gt + 1);
    if (b == std::string_view::npos) break;
    out.push_back(xml.substr(gt + 1, b - gt - 1));
    pos = b + close.size();
  }
  return out;
}

std::string_view XmlFirst(std::string_view xml, std::string_view name) {
  auto all = XmlElements(xml, name);
  return all.empty() ? std::string_view() : all.front();
}

namespace {

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

Result<std::string> XmlUnescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    size_t semi = text.find(';', i);
    if (semi == std::string_view::npos || semi - i > 12) {
      return CorruptError("malformed XML entity in '" + std::string(text.substr(i, 16)) + "'");
    }
    std::string_view ent = text.substr(i + 1, semi - i - 1);
    if (ent == "amp") out += '&';
    else if (ent == "lt") out += '<';
    else if (ent == "gt") out += '>';
    else if (ent == "quot") out += '"';
    else if (ent == "apos") out += '\'';
    else if (ent.size() >= 2 && ent[0] == '#') {
      bool hex = ent[1] == 'x' || ent[1] == 'X';
      std::string digits(ent.substr(hex ? 2 : 1));
      char* end = nullptr;
      unsigned long cp = digits.empty() ? 0x110000 : std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
      if (digits.empty() || *end != '\0' || cp == 0 || cp > 0x10FFFF) {
        return CorruptError("malformed XML character reference '&" + std::string(ent) + ";'");
      }
      AppendUtf8(static_cast<uint32_t>(cp), &out);
    } else {
      return CorruptError("unknown XML entity '&" + std::string(ent) + ";'");
    }
    i = semi;
  }
  return out;
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace sluice
