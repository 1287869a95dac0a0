// HttpClient::GetToFile: parallel ranged GETs written in aligned blocks of
// kPageCacheWriteBlock (through io_uring, or pwrite on
// GetToFileOptions::write_pool) into a TempFile (base/file.h), renamed into
// place.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/random_access_file.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write_at.hpp>

#include "base/asio/co_status.h"
#include "base/asio/run_on_pool.h"
#include "base/file.h"
#include "stores/http/http_client.h"

namespace sluice {

namespace asio = boost::asio;
using asio::awaitable;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

namespace {

// Writes a body at consecutive file offsets from `offset`, one whole block
// of kPageCacheWriteBlock per write call at block-aligned offsets (and what
// is left at the end, by Flush): the page cache then holds the file in
// folios of that size (see base/file.h for why small ones).
class FileWriter {
 public:
  static constexpr uint64_t kBlock = kPageCacheWriteBlock;

  FileWriter(asio::random_access_file* file, uint64_t offset, const std::string* path,
             asio::thread_pool* pool)
      : file_(file), path_(path), pool_(pool), at_(offset) {}

  awaitable<Status> Append(std::string_view chunk) {
    while (!chunk.empty()) {
      if (staged_.empty() && at_ % kBlock == 0 && chunk.size() >= kBlock) {
        // Whole aligned blocks straight from the chunk: the client hands
        // over body buffers of several blocks, so this is the usual path.
        const size_t whole = chunk.size() - chunk.size() % kBlock;
        SLUICE_CO_RETURN_IF_ERROR(co_await WriteAt(chunk.substr(0, whole)));
        chunk.remove_prefix(whole);
        continue;
      }
      if (staged_.capacity() < kBlock) staged_.reserve(kBlock);
      const uint64_t end = at_ + staged_.size();
      const size_t room = static_cast<size_t>(kBlock - end % kBlock);
      const size_t take = std::min(room, chunk.size());
      staged_.append(chunk.data(), take);
      chunk.remove_prefix(take);
      if (take == room) SLUICE_CO_RETURN_IF_ERROR(co_await Flush());
    }
    co_return Status::Ok();
  }

  awaitable<Status> Flush() {
    if (staged_.empty()) co_return Status::Ok();
    SLUICE_CO_RETURN_IF_ERROR(co_await WriteAt(staged_));
    staged_.clear();
    co_return Status::Ok();
  }

  BodySink Sink() {
    return [this](std::string_view chunk) { return Append(chunk); };
  }

 private:
  // Writes `data` at at_, at most one block per write call (a longer call
  // would have the kernel allocate a bigger folio), and moves at_ past it.
  awaitable<Status> WriteAt(std::string_view data) {
    if (pool_ != nullptr) {
      const int fd = file_->native_handle();
      const uint64_t at = at_;
      int err = co_await RunOnCpuPool(*pool_, [fd, data, at]() -> int {
        size_t done = 0;
        while (done < data.size()) {
          size_t want = std::min<size_t>(data.size() - done, kBlock - (at + done) % kBlock);
          ssize_t n = ::pwrite(fd, data.data() + done, want, static_cast<off_t>(at + done));
          if (n < 0 && errno == EINTR) continue;
          if (n < 0) return errno;
          done += static_cast<size_t>(n);
        }
        return 0;
      });
      if (err != 0) co_return WriteError(data.size(), at_, std::strerror(err));
      at_ += data.size();
      co_return Status::Ok();
    }
    while (!data.empty()) {
      // Asio's own completion conditions cap each write at 64 KiB: ask for
      // the whole rest of the block each time.
      const size_t size = std::min<size_t>(data.size(), kBlock - at_ % kBlock);
      auto whole = [size](const boost::system::error_code& ec, size_t done) -> size_t {
        return ec ? 0 : size - done;
      };
      auto [ec, n] = co_await asio::async_write_at(*file_, at_, asio::buffer(data.data(), size),
                                                   whole, kTuple);
      if (ec) co_return WriteError(size, at_, ec.message());
      at_ += n;
      data.remove_prefix(n);
    }
    co_return Status::Ok();
  }

  Status WriteError(size_t size, uint64_t at, const std::string& why) const {
    return IoError("writing " + std::to_string(size) + " bytes at offset " + std::to_string(at) +
                   " of '" + *path_ + "': " + why);
  }

  asio::random_access_file* file_;
  const std::string* path_;
  asio::thread_pool* pool_;  // see GetToFileOptions::write_pool
  uint64_t at_;          // file offset of staged_[0]
  std::string staged_;   // never crosses a block boundary
};

// Send with the body written to `file` from `offset`.
awaitable<Result<HttpResponse>> SendToFile(HttpClient* client, HttpRequest request,
                                           asio::random_access_file* file, uint64_t offset,
                                           const std::string* path, asio::thread_pool* pool) {
  FileWriter writer(file, offset, path, pool);
  Result<HttpResponse> response = co_await client->Send(std::move(request), writer.Sink());
  if (response.ok()) SLUICE_CO_RETURN_IF_ERROR(co_await writer.Flush());
  co_return response;
}

struct PartPlan {
  std::string url;
  HttpHeaders headers;
  uint64_t total = 0;
  uint64_t part_size = 0;
  uint64_t parts = 0;       // including part 0, already fetched
  uint64_t next_part = 1;   // shared by the workers (one thread: no lock)
  asio::thread_pool* write_pool = nullptr;
  std::optional<uint64_t> expected_size;
  Status first_error;
};

awaitable<Status> PartWorker(HttpClient* client, asio::random_access_file* file,
                             const std::string* tmp, PartPlan* plan) {
  while (plan->first_error.ok() && plan->next_part < plan->parts) {
    uint64_t part = plan->next_part++;
    uint64_t first = part * plan->part_size;
    uint64_t last = std::min(plan->total, first + plan->part_size) - 1;
    HttpRequest request;
    request.url = plan->url;
    request.headers = plan->headers;
    request.range = ByteRange::FromTo(first, last);
    request.expected_object_size = plan->expected_size;
    SLUICE_CO_ASSIGN_OR_RETURN(HttpResponse response,
                               co_await SendToFile(client, std::move(request), file, first, tmp,
                                                       plan->write_pool));
    if (response.body_bytes != last - first + 1) {
      co_return CorruptError("GET " + response.final_url + ": part " + std::to_string(part) +
                             " (bytes " + std::to_string(first) + "-" + std::to_string(last) +
                             ") delivered " + std::to_string(response.body_bytes) + " bytes");
    }
    if (response.object_size && *response.object_size != plan->total) {
      co_return CorruptError("GET " + response.final_url + ": the object changed size during "
                             "the download (" + std::to_string(plan->total) + " then " +
                             std::to_string(*response.object_size) + " bytes)");
    }
  }
  co_return Status::Ok();
}

// The download's one temporary by base/file.h's scheme, created
// kNewFileMode (asio's own open would create it 0777 & ~umask) and written in
// place when `path` is a temporary of this process already (the shard
// cache's); its descriptor is handed to `file`.
Result<TempFile> OpenTemp(const std::string& path, const std::string& url,
                          asio::random_access_file* file) {
  Result<TempFile> temp = TempFile::Create(path);
  if (!temp.ok()) return temp.status().WithContext("GET " + RedactUrl(url));
  boost::system::error_code ec;
  file->assign(temp->ReleaseFd(), ec);
  if (ec) {
    return IoError("cannot use '" + temp->path() + "' for " + RedactUrl(url) + ": " + ec.message());
  }
  return temp;
}

}  // namespace

// GCC 12 at -O2 flags Asio's coroutine frame delete as mismatched with its
// aligned_alloc in this frame (it pairs with Asio's own operator delete, which
// frees it correctly): a false positive, silenced for this function only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
awaitable<Result<HttpResponse>> HttpClient::GetToFile(std::string url, std::string path,
                                                      GetToFileOptions options,
                                                      HttpHeaders extra_headers) {
  if (options.part_size == 0 || options.concurrency < 1) {
    co_return InvalidArgumentError("GetToFile: part_size must be > 0 and concurrency >= 1");
  }
  // Awaits below must not throw on cancellation: this frame owns state that
  // the part workers reference until they have all finished.
  co_await asio::this_coro::throw_if_cancelled(false);
  auto executor = co_await asio::this_coro::executor;

  asio::random_access_file file(executor);
  Result<TempFile> temp = OpenTemp(path, url, &file);
  if (!temp.ok()) co_return temp.status();
  TempFile& guard = *temp;
  boost::system::error_code ec;

  // Part 0 tells the object's size (Content-Range) and whether the server
  // serves ranges at all (a 200 carries the whole object). An object known
  // to be empty is fetched plainly: no range fits in it, and servers answer
  // one differently (416, or s3rver's 206 "bytes 0-0/0").
  HttpRequest first;
  first.url = url;
  first.headers = extra_headers;
  if (options.expected_size != uint64_t{0}) first.range = ByteRange::FromTo(0, options.part_size - 1);
  first.expected_object_size = options.expected_size;
  Result<HttpResponse> head =
      co_await SendToFile(this, first, &file, 0, &guard.path(), options.write_pool);
  if (!head.ok() && head.status().code() == StatusCode::kOutOfRange) {
    // 416 for bytes=0-...: an empty object. Fetch it plainly.
    first.range.reset();
    file.resize(0, ec);
    head = co_await SendToFile(this, first, &file, 0, &guard.path(), options.write_pool);
  }
  if (!head.ok()) co_return head.status();
  HttpResponse response = std::move(head).value();

  if (response.status == 206) {
    if (!response.object_size) {
      co_return IoError("GET " + response.final_url +
                        ": 206 without the object's total size in Content-Range");
    }
    PartPlan plan;
    plan.url = url;
    plan.headers = extra_headers;
    std::string etag = response.Header("etag");
    if (!etag.empty()) plan.headers.emplace_back("If-Match", etag);
    plan.total = *response.object_size;
    plan.part_size = options.part_size;
    plan.write_pool = options.write_pool;
    plan.expected_size = options.expected_size;
    plan.parts = (plan.total + plan.part_size - 1) / plan.part_size;
    int workers = static_cast<int>(
        std::min<uint64_t>(static_cast<uint64_t>(options.concurrency),
                           plan.parts > 0 ? plan.parts - 1 : 0));
    if (workers > 0) {
      std::vector<asio::cancellation_signal> signals(static_cast<size_t>(workers));
      int running = workers;
      asio::steady_timer all_done(executor, asio::steady_timer::time_point::max());
      for (int i = 0; i < workers; ++i) {
        asio::co_spawn(
            executor, PartWorker(this, &file, &guard.path(), &plan),
            asio::bind_cancellation_slot(
                signals[static_cast<size_t>(i)].slot(),
                [&, i](std::exception_ptr e, Status s) {
                  if (e) s = CancelledError("GET " + RedactUrl(url) + ": cancelled");
                  if (!s.ok() && plan.first_error.ok()) {
                    plan.first_error = s;
                    for (int j = 0; j < workers; ++j) {
                      if (j != i) signals[static_cast<size_t>(j)].emit(asio::cancellation_type::terminal);
                    }
                  }
                  if (--running == 0) all_done.cancel();
                }));
      }
      bool cancelled = false;
      while (running > 0) {
        co_await all_done.async_wait(kTuple);
        auto state = co_await asio::this_coro::cancellation_state;
        if (!cancelled && state.cancelled() != asio::cancellation_type::none) {
          cancelled = true;
          if (plan.first_error.ok()) {
            plan.first_error = CancelledError("GET " + RedactUrl(url) + ": cancelled");
          }
          for (auto& signal : signals) signal.emit(asio::cancellation_type::terminal);
        }
      }
      if (!plan.first_error.ok()) co_return plan.first_error;
    }
    response.body_bytes = plan.total;
  }

  uint64_t size = file.size(ec);
  if (ec) co_return IoError("cannot stat '" + guard.path() + "': " + ec.message());
  if (response.object_size && size != *response.object_size) {
    co_return CorruptError("GET " + response.final_url + ": wrote " + std::to_string(size) +
                           " bytes but the object has " +
                           std::to_string(*response.object_size));
  }
  file.close(ec);
  if (ec) co_return IoError("cannot close '" + guard.path() + "': " + ec.message());
  SLUICE_CO_RETURN_IF_ERROR(guard.Commit());
  co_return response;
}

#pragma GCC diagnostic pop

}  // namespace sluice
