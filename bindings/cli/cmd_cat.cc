// sluice cat DIR INDEX: one sample as JSON, in the shape of the compat
// expected.jsonl files (encoding, decoded value, raw_hex per column).
#include <cstdio>

#include "bindings/cli/commands.h"
#include "bindings/cli/flags.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/dataset/sample_json.h"

namespace sluice::cli {

int RunCat(const Args& args) {
  auto flags = ParseFlags(args, {}, {});
  if (!flags.ok()) return Error("cat", flags.status(), 2);
  if (flags->positional.size() != 2) {
    std::fputs("usage: sluice cat DIR INDEX\n", stderr);
    return 2;
  }
  auto index = ParseCount(flags->positional[1], "INDEX");
  if (!index.ok()) return Error("cat", index.status(), 2);
  auto reader = DatasetReader::Open(flags->positional[0]);
  if (!reader.ok()) return Error("cat", reader.status());
  auto json = SampleToJson(**reader, *index);
  if (!json.ok()) return Error("cat", json.status());
  std::printf("%s\n", json->c_str());
  return 0;
}

}  // namespace sluice::cli
