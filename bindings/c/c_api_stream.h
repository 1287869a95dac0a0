// The sluice_stream handle, shared by the files that implement sluice_stream_*.
#pragma once

#include <cstdint>
#include <memory>
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
};
