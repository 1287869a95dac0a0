// The parts of a paged XML listing (S3's ListObjectsV2 <Contents>, Azure's
// List Blobs <Blob>) that every lister handles alike. Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

// Reads one listing entry: the object's name from element `name_tag`, its
// size from `size_tag` and its etag (ObjectInfo::etag, unescaped, quotes
// kept) from `etag_tag` ("" when the entry has none). Appends it to *out, named relative to the store's
// root, when the name starts with `base` (the root's path inside the bucket
// plus '/', or ""); names outside are skipped. kCorrupt naming `root` and
// the entry when the name is malformed or the size is not a number.
Status AppendListedObject(std::string_view entry, std::string_view name_tag,
                          std::string_view size_tag, std::string_view etag_tag,
                          std::string_view base, std::string_view root,
                          std::vector<ObjectInfo>* out);

// How a service pages an XML listing.
struct XmlListingDialect {
  std::string_view operation;     // for errors: "list" (S3), "List Blobs" (Azure)
  std::string_view document;      // the page's root element: "ListBucketResult"
  std::string_view entries_in;    // the element holding the entries ("Blobs"), "" = the page
  std::string_view entry;         // one object: "Contents", "Blob"
  std::string_view name_tag;      // its name: "Key", "Name"
  std::string_view size_tag;      // its size: "Size", "Content-Length"
  // More pages follow when this element says "true" ("IsTruncated"); ""
  // when a non-empty next token alone says so (Azure's NextMarker).
  std::string_view truncated_tag;
  std::string_view next_tag;      // the next page's token: "NextContinuationToken"
  // A delimited listing's sub-prefix: the element ("CommonPrefixes",
  // "BlobPrefix", inside entries_in) and its name ("Prefix", "Name").
  std::string_view prefix_entry;
  std::string_view prefix_tag;
  // An object's etag (ObjectInfo::etag): "ETag" (S3, GCS), "Etag" (Azure,
  // inside <Properties>).
  std::string_view etag_tag;
};

// S3's ListObjectsV2 (and GCS's, through its S3-compatible XML API, whose
// <ETag> changes with every new generation of the object).
inline constexpr XmlListingDialect kListObjectsV2Dialect{
    "list", "ListBucketResult", "", "Contents", "Key", "Size", "IsTruncated",
    "NextContinuationToken", "CommonPrefixes", "Prefix", "ETag"};
// Azure's List Blobs (<Etag> inside each blob's <Properties>).
inline constexpr XmlListingDialect kListBlobsDialect{
    "List Blobs", "EnumerationResults", "Blobs", "Blob", "Name", "Content-Length", "",
    "NextMarker", "BlobPrefix", "Name", "Etag"};

// Reads page number `page` (from 0) of a listing: appends its entries to
// *out (AppendListedObject), its sub-prefixes (relative to `base`, those
// outside skipped) to *sub_prefixes when that is non-null, and returns the next page's token, or "" after
// the last page. kCorrupt naming `root` and the page when it is not a page
// of this dialect, or announces another page without a new token (a
// server that would make the lister loop forever).
Result<std::string> ReadXmlListingPage(const XmlListingDialect& dialect, std::string_view xml,
                                       int page, std::string_view previous_token,
                                       std::string_view base, std::string_view root,
                                       std::vector<ObjectInfo>* out,
                                       std::vector<std::string>* sub_prefixes = nullptr);

// Sorts by key (Store::List's order). A listing of at least
// kParallelSortFrom objects is sorted in parts on the machine's cores, the
// parts then merged: a folder of a million files was a second of one
// core's sort while the node's first open had nothing else to do.
inline constexpr size_t kParallelSortFrom = size_t{1} << 16;
void SortByKey(std::vector<ObjectInfo>* objects);

}  // namespace sluice
