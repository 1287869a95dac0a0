/* Streams a dataset folder in Mosaic's shuffled order, stops after 10
 * samples as an interrupted job would, saves Mosaic's state_dict, and resumes
 * from it: the two runs together yield each sample of the epoch once.
 * usage: stream_example DATASET (a folder holding index.json; its path must
 * not contain '"' or '\', since it is pasted into JSON unescaped). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sluice.h>

enum { kBatch = 4 };

/* Reads the iteration begun on `s` until `limit` samples or the epoch's end,
 * printing the ids; returns how many were read, or -1 on error. */
static int64_t read_ids(sluice_stream* s, uint32_t num_columns, int64_t limit) {
  int64_t ids[kBatch];
  sluice_bytes* fields = malloc(kBatch * (num_columns ? num_columns : 1) * sizeof *fields);
  int64_t taken = 0;
  while (fields && taken < limit) {
    uint32_t want = limit - taken < kBatch ? (uint32_t)(limit - taken) : kBatch;
    uint32_t count = 0;
    if (sluice_stream_next_batch(s, want, ids, fields, &count) != SLUICE_OK) {
      taken = -1;
      break;
    }
    if (count == 0) break; /* this worker's epoch is done */
    /* fields[k * num_columns + c] views column c of sample ids[k] until the
     * next call on `s`. */
    for (uint32_t k = 0; k < count; ++k) printf(" %" PRId64, ids[k]);
    taken += count;
  }
  printf("\n");
  free(fields);
  return fields ? taken : -1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DATASET\n", argv[0]);
    return 2;
  }
  if (sluice_abi_version() != SLUICE_ABI_VERSION) {
    fprintf(stderr, "libsluice has ABI %u, this program was built for %d\n",
            (unsigned)sluice_abi_version(), SLUICE_ABI_VERSION);
    return 1;
  }
  char config[4096];
  /* One process (an explicit world, so RANK/WORLD_SIZE are not read); a
   * folder with no remote is read in place. */
  snprintf(config, sizeof config,
           "{\"local\": \"%s\", \"batch_size\": %d, \"shuffle\": true, \"shuffle_seed\": 7,"
           " \"world\": {\"rank\": 0, \"world_size\": 1}}",
           argv[1], kBatch);
  sluice_stream* s = NULL;
  if (sluice_stream_open(config, &s) != SLUICE_OK) {
    fprintf(stderr, "open: %s\n", sluice_last_error());
    return 1;
  }
  uint32_t num_columns = sluice_stream_num_columns(s);
  printf("%" PRIu64 " samples, %" PRIu64 " per epoch for this rank\n",
         sluice_stream_num_samples(s), sluice_stream_len(s));

  char* state = NULL;
  uint64_t epoch = 0, sample_in_epoch = 0;
  int64_t first = -1, rest = -1;
  int status = 1;
  printf("first 10:");
  if (sluice_stream_iter_begin(s, 0, 0, 0, 1) == SLUICE_OK &&
      (first = read_ids(s, num_columns, 10)) >= 0 &&
      /* What a trainer checkpoints: Mosaic's state_dict and Sluice's order record, as JSON. */
      sluice_stream_state_json(s, (uint64_t)first, &state) == SLUICE_OK) {
    printf("state: %s\n", state);
    /* ...later, maybe in a new process with a new handle: */
    if (sluice_stream_load_state(s, state, &epoch, &sample_in_epoch) == SLUICE_OK &&
        sluice_stream_iter_begin(s, epoch, sample_in_epoch, 0, 1) == SLUICE_OK) {
      printf("resumed at epoch %" PRIu64 ", sample %" PRIu64 ":", epoch, sample_in_epoch);
      rest = read_ids(s, num_columns, INT64_MAX);
    }
  }
  if (rest >= 0) {
    printf("%" PRId64 " + %" PRId64 " samples\n", first, rest);
    status = 0;
  } else {
    fprintf(stderr, "%s\n", sluice_last_error());
  }
  sluice_free(state);
  sluice_stream_close(s); /* ends the iteration and its prefetch thread */
  return status;
}
