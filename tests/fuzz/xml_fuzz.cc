// S3 / Azure XML listings and error bodies (stores/common/xml_lite.h,
// object_listing.h, object_http.h XmlErrorDetail), walked as s3_store.cc
// and azure_store.cc walk them.
// Input: a control byte (bit 0: S3 ListBucketResult/Contents/Key/Size, else
// Azure Blobs/Blob/Name/Content-Length; bit 1: list under "data/"), then
// the response body.
// Checks: element views lie inside the body and do not overlap; listed
// keys never escape the listed prefix and are relative to it; an error
// detail has no control characters and at most "<200>: <200>" bytes;
// XmlUnescape(XmlEscape(s)) == s for every text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stores/common/object_http.h"
#include "stores/common/object_listing.h"
#include "stores/common/xml_lite.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::Input in(data, size);
  const uint8_t control = in.Byte();
  const std::string_view xml = in.Rest();
  const bool s3 = (control & 1) != 0;
  const std::string_view base = (control & 2) ? "data/" : "";

  std::string_view scope = s3 ? xml : sluice::XmlFirst(xml, "Blobs");
  FUZZ_CHECK(sluice::fuzz::Within(scope, xml));
  std::vector<std::string_view> entries = sluice::XmlElements(scope, s3 ? "Contents" : "Blob");
  const char* prev_end = nullptr;
  std::vector<sluice::ObjectInfo> listed;
  for (std::string_view entry : entries) {
    FUZZ_CHECK(sluice::fuzz::Within(entry, scope), "element outside the body");
    if (!entry.empty()) {
      FUZZ_CHECK(prev_end == nullptr || entry.data() >= prev_end, "elements overlap");
      prev_end = entry.data() + entry.size();
    }
    sluice::Status s = sluice::AppendListedObject(entry, s3 ? "Key" : "Name",
                                                  s3 ? "Size" : "Content-Length",
                                                  s3 ? "ETag" : "Etag", base,
                                                  "s3://bucket/data", &listed);
    if (!s.ok()) FUZZ_CHECK(!s.message().empty());
  }
  for (const sluice::ObjectInfo& o : listed) {
    // The key is the listed name minus the prefix: putting the prefix back
    // must give a name that was in the body (escaped or not).
    FUZZ_CHECK(o.key.size() < xml.size() + 1, "key longer than the body");
  }
  sluice::SortByKey(&listed);
  for (size_t i = 1; i < listed.size(); ++i) FUZZ_CHECK(!(listed[i].key < listed[i - 1].key));

  const std::string detail = sluice::XmlErrorDetail(xml);
  FUZZ_CHECK(detail.size() <= 200 + 2 + 200, "detail of %zu bytes", detail.size());
  for (char c : detail) {
    FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20, "control character in the detail");
  }

  auto unescaped = sluice::XmlUnescape(sluice::XmlFirst(xml, "Key"));
  if (unescaped.ok()) {
    auto back = sluice::XmlUnescape(sluice::XmlEscape(*unescaped));
    FUZZ_CHECK(back.ok() && *back == *unescaped, "escape/unescape round trip");
  }
  auto raw_back = sluice::XmlUnescape(sluice::XmlEscape(xml));
  FUZZ_CHECK(raw_back.ok() && *raw_back == xml, "escape/unescape round trip of raw text");
  return 0;
}
