// The sluice_stream handle, shared by the files that implement sluice_stream_*.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/dataset/streaming_dataset.h"

struct sluice_stream {
  std::unique_ptr<sluice::StreamingDataset> ds;
  sluice::SampleFields one;                 // sluice_stream_get's sample
  std::vector<sluice::SampleFields> batch;  // sluice_stream_next_batch's samples
  // Samples of the last sluice_stream_next_batch whose views batch[0..) still
  // holds; 0 once any call that ends those views ran (get, iter_begin,
  // release, load_state, a failed next_batch).
  uint32_t batch_count = 0;
  // sluice_stream_read_masks, and the last get's or next_batch's fields
  // holding a null element: (sample k, column, validity).
  bool read_masks = false;
  struct Masked {
    uint32_t sample;
    uint32_t column;
    std::string_view validity;
  };
  std::vector<Masked> masked;
  // sluice_stream_read_pieces, and the last next_batch's fields handed out
  // as their pieces (sample k, column, the pieces: SampleFields::pieced of
  // batch[k], valid as the batch's views).
  bool read_pieces = false;
  struct Pieced {
    uint32_t sample;
    uint32_t column;
    const sluice::parquet::PiecedField* value;
  };
  std::vector<Pieced> pieced;
};
