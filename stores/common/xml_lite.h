// Just enough XML for S3-style responses (ListObjectsV2 / ListBucketResult,
// InitiateMultipartUploadResult, List Blobs): find elements by name, read
// their text, decode entities, and escape text for request bodies. Not a
// general parser: no attributes, no CDATA, no namespaces beyond ignoring a
// prefix-less xmlns attribute. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice {

// The raw inner text of each <name>...</name> (also <name attr="..">) in
// `xml`, in document order, not descending into matches. Views point into
// `xml`. Self-closing <name/> yields an empty view.
std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view name);

// The first element's raw inner text, or empty when there is none.
std::string_view XmlFirst(std::string_view xml, std::string_view name);

// Decodes &amp; &lt; &gt; &quot; &apos; &#N; &#xN; (UTF-8 for code points).
// kCorrupt on an unknown or malformed entity.
Result<std::string> XmlUnescape(std::string_view text);

// Escapes & < > " ' for element text.
std::string XmlEscape(std::string_view text);

}  // namespace sluice
