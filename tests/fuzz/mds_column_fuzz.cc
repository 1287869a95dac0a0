// Every MDS column encoding (formats/mds column_encoding + column_decoder).
//
// Input: a control byte, then the stored field. Control < 0xF0 picks an
// encoding from mds_encodings.h; otherwise the next byte is the length of
// an encoding name taken from the input (ParseColumnEncoding fuzzed too:
// what it accepts is an MDS encoding whose column size is consistent).
// The field is decoded as mds_field_check.h checks.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/mds/column_encoding.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/mds_encodings.h"
#include "tests/fuzz/mds_field_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::Input in(data, size);
  const uint8_t control = in.Byte();
  std::string name;
  if (control < 0xF0) {
    name = sluice::fuzz::kMdsEncodings[control % sluice::fuzz::kNumMdsEncodings];
  } else {
    name = std::string(in.Take(in.Byte()));
  }
  sluice::Result<sluice::ColumnEncoding> enc = sluice::ParseColumnEncoding(name, "col");
  if (!enc.ok()) {
    FUZZ_CHECK(control >= 0xF0, "listed encoding %s refused", name.c_str());
    FUZZ_CHECK(!sluice::IsMdsEncoding(name));
    return 0;
  }
  FUZZ_CHECK(sluice::IsMdsEncoding(name));
  sluice::Result<std::optional<uint64_t>> size_of = sluice::ColumnEncodingSize(name);
  FUZZ_CHECK(size_of.ok() && *size_of == enc->fixed_size, "column size disagrees for %s",
             name.c_str());
  if (enc->fixed_size) FUZZ_CHECK(*enc->fixed_size <= UINT32_MAX);
  sluice::fuzz::CheckField(*enc, in.Rest());
  return 0;
}
