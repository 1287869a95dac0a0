// sluice ls DATASET: the files a raw-file dataset over DATASET would hold,
// in its order, with their sizes (nothing is downloaded or cached).
#include <cstdio>

#include "bindings/cli/commands.h"
#include "bindings/cli/flags.h"
#include "engine/dataset/file_listing_index.h"
#include "engine/dataset/remote_source.h"
#include "formats/raw/file_listing.h"

namespace sluice::cli {
namespace {

constexpr const char* kLsUsage =
    "usage: sluice ls DATASET [--glob PATTERN[,PATTERN...]] [--manifest NAME] [--split NAME]\n"
    "  DATASET: a folder or store URL; prints each file of the raw-file dataset it holds\n"
    "  (size, then path, in the dataset's order), then a total. Names starting with '_'\n"
    "  or '.' are left out; a glob without '/' matches names at any depth (\"*.jpg\"),\n"
    "  one with '/' the whole path (\"train/*.jpg\"); --manifest NAME lists the files\n"
    "  named in NAME (one path or {\"path\", \"size\"} per line) instead of the store.\n";

std::vector<std::string> SplitGlobs(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

int RunLs(const Args& args, Env* env) {
  auto flags = ParseFlags(args, {"glob", "manifest", "split"});
  if (!flags.ok()) return Error("ls", flags.status(), 2);
  if (flags->positional.size() != 1) {
    std::fputs(kLsUsage, stderr);
    return 2;
  }
  StreamOptions stream;
  stream.split = flags->Get("split").value_or("");
  stream.files.emplace();
  stream.files->manifest = flags->Get("manifest").value_or("");
  if (auto globs = flags->Get("glob")) stream.files->selection.globs = SplitGlobs(*globs);
  // Every file the listing touches (a local folder's walk, a fetched
  // manifest and its temporary) goes through `env`.
  StoreOptions store_options;
  store_options.env = env;
  auto remote = OpenRemoteSource(flags->positional[0], store_options);
  if (!remote.ok()) return Error("ls", remote.status(), 2);
  auto listed = ListStreamFiles(stream, remote->get(), **remote, env);
  if (!listed.ok()) return Error("ls", listed.status());
  const size_t total_listed = listed->size();
  auto files = SelectFiles(std::move(*listed), stream.files->selection, (*remote)->Describe());
  if (!files.ok()) return Error("ls", files.status());
  uint64_t bytes = 0;
  for (const ListedFile& f : *files) {
    std::printf("%llu\t%s\n", static_cast<unsigned long long>(*f.size), f.path.c_str());
    bytes += *f.size;
  }
  std::printf("%zu files, %llu bytes (of %zu listed)\n", files->size(),
              static_cast<unsigned long long>(bytes), total_listed);
  return 0;
}

}  // namespace sluice::cli
