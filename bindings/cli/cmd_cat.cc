// sluice cat DATASET INDEX: one sample as JSON, in the shape of the compat
// expected.jsonl files (encoding, decoded value, raw_hex per column).
#include <cstdio>

#include "bindings/cli/commands.h"
#include "bindings/cli/dataset_source.h"
#include "bindings/cli/flags.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/dataset/sample_json.h"

namespace sluice::cli {

int RunCat(const Args& args) {
  auto flags = ParseFlags(args, {}, {});
  if (!flags.ok()) return Error("cat", flags.status(), 2);
  if (flags->positional.size() != 2) {
    std::fputs("usage: sluice cat DATASET INDEX\n", stderr);
    return 2;
  }
  auto index = ParseCount(flags->positional[1], "INDEX");
  if (!index.ok()) return Error("cat", index.status(), 2);
  auto source = DatasetSource::Open(flags->positional[0]);
  if (!source.ok()) return Error("cat", source.status());
  DatasetSource& src = **source;
  auto reader = DatasetReader::Open(src.folder());
  if (!reader.ok()) return Error("cat", src.Explain(reader.status()));
  // Only the shard holding the sample is fetched.
  auto where = (*reader)->Locate(*index);
  if (!where.ok()) return Error("cat", src.Explain(where.status()));
  Status fetched = src.Fetch((*reader)->index().shards[where->shard]);
  if (!fetched.ok()) return Error("cat", fetched);
  auto json = SampleToJson(**reader, *index);
  if (!json.ok()) return Error("cat", src.Explain(json.status()));
  std::printf("%s\n", json->c_str());
  return 0;
}

}  // namespace sluice::cli
