#include "stores/common/part_uploads.h"

#include <algorithm>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/asio/co_status.h"
#include "base/file.h"
#include "stores/common/store_keys.h"

namespace sluice {
namespace {

namespace asio = boost::asio;
using asio::awaitable;

struct PartQueue {
  uint64_t parts = 0;
  uint64_t next = 0;
  Status first_error;
  std::function<awaitable<Status>(uint64_t)> upload_part;
};

// Takes the next part until none is left or one has failed. Workers share
// `queue` on one executor, so no locking is needed.
awaitable<void> PartWorker(PartQueue* queue) {
  while (queue->first_error.ok() && queue->next < queue->parts) {
    uint64_t part = queue->next++;
    Status s = co_await queue->upload_part(part);
    if (!s.ok() && queue->first_error.ok()) queue->first_error = std::move(s);
  }
}

}  // namespace

awaitable<Status> PutFileInParts(Store& store, std::string key, std::string path,
                                 uint64_t part_size, UploadInParts upload) {
  SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, store.root()));
  auto size = FileSize(path);
  if (!size.ok()) co_return size.status();
  uint64_t part = std::max<uint64_t>(part_size, 1);
  if (*size <= part) {
    SLUICE_CO_ASSIGN_OR_RETURN(std::string bytes, ReadLocalFileRange(path, 0, *size));
    co_return co_await store.Put(std::move(key), std::move(bytes));
  }
  co_return co_await upload(std::move(key), std::move(path), *size, part);
}

awaitable<Status> ForEachPartConcurrently(uint64_t parts, int concurrency,
                                          std::function<awaitable<Status>(uint64_t)> upload_part) {
  PartQueue queue;
  queue.parts = parts;
  queue.upload_part = std::move(upload_part);
  uint64_t workers = std::min<uint64_t>(parts, static_cast<uint64_t>(std::max(concurrency, 1)));
  if (workers == 0) co_return Status::Ok();
  auto executor = co_await asio::this_coro::executor;
  using Op = decltype(asio::co_spawn(executor, PartWorker(&queue), asio::deferred));
  std::vector<Op> ops;
  for (uint64_t i = 0; i < workers; ++i) {
    ops.push_back(asio::co_spawn(executor, PartWorker(&queue), asio::deferred));
  }
  // wait_for_all: `queue` lives in this frame, so every worker must finish
  // before it returns (a cancellation of this coroutine reaches the workers
  // through the group and they end with an exception).
  auto [order, exceptions] = co_await asio::experimental::make_parallel_group(std::move(ops))
                                 .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
  (void)order;
  for (const std::exception_ptr& e : exceptions) {
    if (e && queue.first_error.ok()) {
      queue.first_error = CancelledError("concurrent parts cancelled");  // uploads, listings, HEADs
    }
  }
  co_return queue.first_error;
}

}  // namespace sluice
