// Token packing over a StreamingDataset: one (rank, worker)'s samples, in
// the order the dataset plans for it (Mosaic's), packed into rows
// (RowPacker) as the samples arrive.
//
// Resumption: the rows a worker hands out in an epoch are a function of
// the epoch's plan for its (world, worker, num_workers) and the spec, so a
// resume point is the number of rows the worker handed out: Begin skips
// that many, handing out nothing. Concat passes over the samples of the
// skipped rows counting their ids only (its resume point in the worker's
// samples is the document the next row starts in and the offset in it);
// bin counts the skipped whole windows the same way and packs again only
// the window the next row is in (a window's rows depend on all of it).
// Exact within one world shape (nodes, ranks per node, DataLoader workers);
// another world shape deals the samples to other workers, so the rows of
// a saved position do not exist there: BeginSegments resumes on it
// instead, packing the tokens no row took yet (pack_segments.h).
//
// Thread safety: as the StreamingDataset (one thread at a time); the
// dataset must outlive this object, and nothing else may iterate it
// between Begin and the end of the epoch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "engine/dataset/streaming_dataset.h"
#include "engine/packing/pack_segments.h"
#include "engine/packing/pack_spec.h"
#include "engine/packing/row_packer.h"
#include "engine/packing/token_decoder.h"
#include "engine/packing/worker_rows.h"

namespace sluice {

class PackedIteration {
 public:
  // kInvalidArgument when the dataset has no column spec.column, or a
  // stream's column is not a column of token ids (TokenDecoder::For).
  static Result<std::unique_ptr<PackedIteration>> Make(StreamingDataset* dataset, PackSpec spec);

  const PackSpec& spec() const { return spec_; }

  // Starts worker `worker` of `num_workers`' rows of `epoch` from the
  // epoch's start (IterBegin(epoch, 0, ..)), then skips `skip_rows` rows.
  Status Begin(int64_t epoch, int64_t worker, int64_t num_workers, uint64_t skip_rows);
  // An elastic resume: the rows of role `role` (global rank x workers +
  // DataLoader worker) of the last of `segments` (the shape this process
  // runs on; pack_segments.h's rule), after its first `skip_rows` (row for
  // row the rows that role would hand out after them). Finding its items
  // reads every document the earlier segments consumed (their token
  // counts, through StreamingDataset::Get; all of a rank's when one of its
  // roles ran out there); its own are read through Get too, without the
  // iteration's prefetch. kInvalidArgument for a role out of the last
  // segment, or what ShapeWorkerIds refuses.
  Status BeginSegments(int64_t epoch, const std::vector<PackSegment>& segments, int64_t role,
                       uint64_t skip_rows);

  // Where DataLoader worker `worker` of global rank `rank` resumes on the
  // last of `segments` after the job consumed its `rows` there: the role
  // to pass to BeginSegments (rank x workers + the worker whose rows it
  // continues) and its skip_rows. Exact in that shape's epoch tail too:
  // counts the rank's roles' rows from their documents' sizes
  // (TailResumePoint). Ends any pass in progress.
  Result<PackResumePoint> SegmentsResumePoint(int64_t epoch, const std::vector<PackSegment>& segments,
                                              int64_t rank, int64_t worker);

  // Where worker `worker` of `num_workers` resumes after its rank consumed
  // `rank_rows` rows in batches of `batch_size` (worker_rows.h
  // TailResumePoint, exact in an epoch's tail too): counts every worker's
  // rows of `epoch` by packing them, up to what ResumePoint gives each, and
  // all of them when one has fewer (it ran out first). Ends any pass in
  // progress (Begin the resumed one after).
  Result<PackResumePoint> ResumePointIn(int64_t epoch, uint64_t rank_rows, uint64_t batch_size,
                                        int64_t worker, int64_t num_workers);

  // Up to `max` next rows: rows k < the returned count are tokens[k *
  // seq_len ..), and when not null segments / positions likewise
  // (RowPacker::Pop). 0 = the epoch is done for this worker.
  Result<size_t> Next(size_t max, int64_t* tokens, int32_t* segments, int32_t* positions);

  // Rows handed out (skipped ones included) since Begin, and where the last
  // one starts (its document counted in this worker's samples of the epoch).
  uint64_t rows() const { return rows_; }
  RowStart last_start() const { return last_start_; }
  uint64_t tokens_in() const { return packer_ ? packer_->tokens_in() : 0; }
  uint64_t padding_out() const { return packer_ ? packer_->padding_out() : 0; }

 private:
  PackedIteration(StreamingDataset* dataset, PackSpec spec)
      : ds_(dataset), spec_(std::move(spec)) {}
  // Rows of worker `worker`'s pass over `epoch`, counted up to `cap`.
  Result<uint64_t> CountRows(int64_t epoch, int64_t worker, int64_t num_workers, uint64_t cap);
  // Reads the next batch of samples into the packer; false at the epoch's end.
  Result<bool> Feed();
  // The decoder of sample `id` of global shard `shard`, or the error naming it.
  Result<const TokenDecoder*> DecoderOf(int64_t id, size_t shard) const;
  // Decodes sample `id`'s token field (of global shard `shard`) into doc_;
  // a decoding error names the sample and shard.
  Status Decode(const TokenDecoder& decoder, std::string_view field, int64_t id, size_t shard);
  // Decode, then adds doc_ to the packer as the next document, from token
  // `from` on (RowPacker::AddFrom).
  Status AddDocument(const TokenDecoder& decoder, std::string_view field, int64_t id, size_t shard,
                     uint64_t from = 0);
  // The items of every role of the last of `segments` (pack_segments.h's
  // rule, each earlier segment's roles consuming what the DataLoader dealt
  // them, in the tail too).
  Result<std::vector<std::vector<PackItem>>> LastSegmentItems(
      int64_t epoch, const std::vector<PackSegment>& segments, const DocTokens& tokens);
  // The rows of one rank's roles (`roles`: their items, in worker order)
  // in `segment`, counted up to what RoleRows gives each, and all of them
  // when one has fewer (it ran out first).
  Result<std::vector<uint64_t>> RankTotals(const PackSegment& segment,
                                           std::span<const std::vector<PackItem>> roles,
                                           const DocTokens& tokens);
  // TokensOf, each id read once into `counted` (which must outlive it).
  DocTokens CountingTokens(std::unordered_map<int64_t, uint64_t>* counted);
  // BeginSegments' reads: a document's token count (no eos), and the next
  // items into the packer (false when none is left).
  Result<uint64_t> TokensOf(int64_t id);
  Result<bool> FeedItems();
  // Concat's resume: passes over the documents of the first `rows` rows
  // counting their ids only (TokenDecoder::Count), and hands the packer the
  // rest of the document the next row starts in. The same rows follow as
  // after packing and dropping `rows` rows.
  Status SkipConcat(uint64_t rows);
  // Bin's resume: whole windows before the first row to hand out are
  // counted (their documents' sizes: RowPacker::BinWindowRows), not
  // packed; the window that holds it is read again (Get) and packed, its
  // earlier rows dropped. The same rows follow as after packing `rows`.
  Status SkipBin(uint64_t rows);

  StreamingDataset* ds_;
  PackSpec spec_;
  size_t column_ = 0;
  std::vector<std::optional<TokenDecoder>> decoders_;  // per stream; none: no such column
  std::unique_ptr<RowPacker> packer_;
  bool done_ = false;
  uint64_t rows_ = 0;
  RowStart last_start_;
  std::vector<int64_t> ids_;
  std::vector<SampleFields> fields_;
  std::vector<int64_t> doc_;  // one document's tokens
  // BeginSegments: this role's items and the next one to pack (from_items_).
  bool from_items_ = false;
  std::vector<PackItem> items_;
  size_t next_item_ = 0;
  SampleFields got_;
};

}  // namespace sluice
