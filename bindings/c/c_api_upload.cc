// sluice_remote_*: small whole objects in a remote folder (index.json for
// merge_index over remote sub-datasets), through engine/upload's RemoteFolder.
#include <cstdlib>
#include <cstring>
#include <string>

#include "bindings/c/c_api_internal.h"
#include "engine/upload/remote_folder.h"
#include "formats/json/py_json.h"

namespace {

using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;

// A malloc'ed NUL-terminated copy (released with sluice_free).
char* MallocCopy(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  if (!text.empty()) std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return out;
}

}  // namespace

extern "C" {

sluice_status sluice_remote_read(const char* folder_url, const char* key, char** data,
                                 uint64_t* size) {
  return Guard("sluice_remote_read", [&] {
    if (folder_url == nullptr) return NullArgument("sluice_remote_read", "folder_url");
    if (key == nullptr) return NullArgument("sluice_remote_read", "key");
    if (data == nullptr) return NullArgument("sluice_remote_read", "data");
    if (size == nullptr) return NullArgument("sluice_remote_read", "size");
    *data = nullptr;
    *size = 0;
    auto folder = sluice::RemoteFolder::Open(folder_url);
    if (!folder.ok()) return Fail(folder.status().WithContext("sluice_remote_read"));
    auto bytes = (*folder)->Read(key);
    if (!bytes.ok()) return Fail(bytes.status());
    *data = MallocCopy(*bytes);
    *size = bytes->size();
    return SLUICE_OK;
  });
}

sluice_status sluice_remote_read_to_file(const char* folder_url, const char* key,
                                         const char* path) {
  return Guard("sluice_remote_read_to_file", [&] {
    if (folder_url == nullptr) return NullArgument("sluice_remote_read_to_file", "folder_url");
    if (key == nullptr) return NullArgument("sluice_remote_read_to_file", "key");
    if (path == nullptr) return NullArgument("sluice_remote_read_to_file", "path");
    auto folder = sluice::RemoteFolder::Open(folder_url);
    if (!folder.ok()) return Fail(folder.status().WithContext("sluice_remote_read_to_file"));
    return sluice::capi::Check((*folder)->ReadToFile(key, path));
  });
}

sluice_status sluice_remote_write(const char* folder_url, const char* key, const uint8_t* data,
                                  uint64_t size) {
  return Guard("sluice_remote_write", [&] {
    if (folder_url == nullptr) return NullArgument("sluice_remote_write", "folder_url");
    if (key == nullptr) return NullArgument("sluice_remote_write", "key");
    if (data == nullptr && size > 0) return NullArgument("sluice_remote_write", "data");
    auto folder = sluice::RemoteFolder::Open(folder_url);
    if (!folder.ok()) return Fail(folder.status().WithContext("sluice_remote_write"));
    std::string bytes(reinterpret_cast<const char*>(data), static_cast<size_t>(size));
    return sluice::capi::Check((*folder)->Write(key, std::move(bytes)));
  });
}

sluice_status sluice_remote_list(const char* folder_url, const char* prefix, char** keys_json) {
  return Guard("sluice_remote_list", [&] {
    if (folder_url == nullptr) return NullArgument("sluice_remote_list", "folder_url");
    if (keys_json == nullptr) return NullArgument("sluice_remote_list", "keys_json");
    *keys_json = nullptr;
    auto folder = sluice::RemoteFolder::Open(folder_url);
    if (!folder.ok()) return Fail(folder.status().WithContext("sluice_remote_list"));
    auto keys = (*folder)->List(prefix ? prefix : "");
    if (!keys.ok()) return Fail(keys.status());
    std::string json = "[";
    for (size_t i = 0; i < keys->size(); ++i) {
      if (i > 0) json += ", ";
      auto st = sluice::AppendPyJsonString(json, (*keys)[i]);
      if (!st.ok()) return Fail(st.WithContext("sluice_remote_list"));
    }
    json += "]";
    *keys_json = MallocCopy(json);
    return SLUICE_OK;
  });
}

}  // extern "C"
