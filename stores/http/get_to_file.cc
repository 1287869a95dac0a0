// HttpClient::GetToFile: parallel ranged GETs written in aligned blocks of
// kPageCacheWriteBlock (through io_uring, or Env::PWriteAll on
// GetToFileOptions::write_pool or for an Env that is not the real one) into
// a TempFile (base/file.h), renamed into place.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/random_access_file.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write_at.hpp>

#include "base/asio/co_status.h"
#include "base/asio/run_on_pool.h"
#include "base/asio/task_group.h"
#include "base/file.h"
#include "stores/http/http_client.h"
#include "stores/http/parts_version.h"

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
             asio::thread_pool* pool, Env* env, FillWatermark* fill)
      : file_(file), path_(path), pool_(pool), env_(env), fill_(fill), at_(offset) {}

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

  // Whether a write failed (the body's error is then the file's, not the
  // server's).
  bool failed() const { return failed_; }

 private:
  // Writes `data` at at_, at most one block per write call (a longer call
  // would have the kernel allocate a bigger folio), and moves at_ past it.
  // Through the Env on the write pool when there is one, and inline for an
  // Env that is not the real one (a test's: it sees every write); else
  // through io_uring.
  awaitable<Status> WriteAt(std::string_view data) {
    if (pool_ != nullptr || !env_->IsDefault()) {
      const int fd = file_->native_handle();
      const uint64_t at = at_;
      const std::string* path = path_;  // the download's, alive until it ends
      Env* env = env_;
      auto write = [fd, path, data, at, env]() -> Status {
        for (size_t done = 0; done < data.size();) {
          const size_t want = std::min<size_t>(data.size() - done, kBlock - (at + done) % kBlock);
          Status st = env->PWriteAll(fd, *path, data.substr(done, want), at + done);
          // The block that failed, not the whole of `data`.
          if (!st.ok()) {
            return st.WithContext("writing " + std::to_string(want) + " bytes at offset " +
                                  std::to_string(at + done));
          }
          done += want;
        }
        return Status::Ok();
      };
      // Not a conditional expression around co_await: GCC 12 destroys its
      // temporaries wrongly there.
      Status written;
      if (pool_ != nullptr) {
        written = co_await RunOnCpuPool(*pool_, write);
      } else {
        written = write();
      }
      if (!written.ok()) {
        failed_ = true;
        co_return written;
      }
      if (fill_ != nullptr) fill_->Wrote(at_, data.size());
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
      if (ec) {
        failed_ = true;
        co_return WriteError(size, at_, ec.message());
      }
      if (fill_ != nullptr) fill_->Wrote(at_, n);
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
  Env* env_;                 // see GetToFileOptions::env
  FillWatermark* fill_;      // see GetToFileOptions::fill; may be null
  uint64_t at_;          // file offset of staged_[0]
  std::string staged_;   // never crosses a block boundary
  bool failed_ = false;
};

// Send with the body written to `file` from `offset`; adds the bytes it
// writes to *written when given.
awaitable<Result<HttpResponse>> SendToFile(HttpClient* client, HttpRequest request,
                                           asio::random_access_file* file, uint64_t offset,
                                           const std::string* path, asio::thread_pool* pool,
                                           Env* env, FillWatermark* fill,
                                           uint64_t* written = nullptr) {
  FileWriter writer(file, offset, path, pool, env, fill);
  BodySink sink = writer.Sink();
  if (written != nullptr) {
    sink = [&writer, written](std::string_view chunk) {
      *written += chunk.size();
      return writer.Append(chunk);
    };
  }
  const std::string where = "GET " + RedactUrl(request.url);
  Result<HttpResponse> response = co_await client->Send(std::move(request), std::move(sink));
  if (response.ok()) {
    Status flushed = co_await writer.Flush();
    if (!flushed.ok()) co_return flushed.WithContext(where);
  }
  // The client passes a sink's error on as it was: name the download.
  if (!response.ok() && writer.failed()) co_return response.status().WithContext(where);
  co_return response;
}

// One download's parts, shared by its part workers on the client's executor
// (one thread: no lock). Part 0 tells whether the server serves ranges; the
// other parts start with it when the caller knows the object's size, and
// until part 0 has answered they ask for the response head only should the
// server ignore Range (so that they never download the whole object).
struct PartPlan {
  enum class First { kPending, kRanged, kWhole };

  std::string url;
  HttpHeaders headers;  // the caller's; If-Match is added once an ETag is known
  uint64_t total = 0;   // 0 until known (the caller's expected size, or part 0)
  uint64_t part_size = 0;
  uint64_t parts = 0;      // including part 0
  uint64_t next_part = 1;
  std::vector<uint64_t> redo;  // answered 200 before part 0 had: fetched again
  asio::thread_pool* write_pool = nullptr;
  Env* env = nullptr;  // GetToFileOptions::env
  FillWatermark* fill = nullptr;  // GetToFileOptions::fill
  std::optional<uint64_t> expected_size;
  First first = First::kPending;
  HttpResponse first_response;
  PartsVersion version;  // fixed by the first part to complete
  uint64_t other_bytes = 0;  // written by parts other than part 0
  asio::steady_timer* first_known = nullptr;  // cancelled when `first` is known
  TaskGroup* workers = nullptr;               // woken on any news for GetToFile
  Status first_error;

  void SetTotal(uint64_t size) {
    total = size;
    parts = (size + part_size - 1) / part_size;
  }
  // Every response must be of the first one's version (PartsVersion): parts
  // of two versions of an object never make one file.
  Status CheckSameObject(uint64_t part, const HttpResponse& response) {
    std::optional<std::string> differs = version.Disagreement(part, response.Header("etag"));
    if (!differs) return Status::Ok();
    return UnavailableError("GET " + response.final_url +
                            ": the object changed during the download (" + *differs + ")");
  }
  void Learned(First outcome) {
    first = outcome;
    first_known->cancel();
    workers->Wake();
  }
};

awaitable<Status> PartWorker(HttpClient* client, asio::random_access_file* file,
                             const std::string* tmp, PartPlan* plan) {
  using First = PartPlan::First;
  while (plan->first_error.ok() && plan->first != First::kWhole &&
         (!plan->redo.empty() || plan->next_part < plan->parts)) {
    uint64_t part;
    if (!plan->redo.empty()) {
      part = plan->redo.back();
      plan->redo.pop_back();
    } else {
      part = plan->next_part++;
    }
    uint64_t first = part * plan->part_size;
    uint64_t last = std::min(plan->total, first + plan->part_size) - 1;
    HttpRequest request;
    request.url = plan->url;
    request.headers = plan->headers;
    if (std::string etag = plan->version.Etag(); !etag.empty()) {
      request.headers.emplace_back("If-Match", std::move(etag));
    }
    request.range = ByteRange::FromTo(first, last);
    request.expected_object_size = plan->expected_size;
    const bool head_only = plan->first == First::kPending;
    if (head_only) request.if_range_ignored = HttpRequest::IgnoredRange::kHeadOnly;
    Result<HttpResponse> sent =
        co_await SendToFile(client, std::move(request), file, first, tmp, plan->write_pool,
                            plan->env, plan->fill, &plan->other_bytes);
    if (head_only && (!sent.ok() || sent->status == 200)) {
      // Sent before part 0 answered, and failed (after the retries the
      // client's policy allows) or found Range ignored: part 0 decides.
      // Answered whole, it is the download and this part does not matter;
      // failed, its error is the download's (a stale expected size: part 0
      // names the size the server states, where later parts only get 416).
      if (plan->first == First::kPending) co_await plan->first_known->async_wait(kTuple);
      if (plan->first == First::kPending) {
        co_return CancelledError("GET " + RedactUrl(plan->url) + ": cancelled");
      }
      if (plan->first == First::kWhole) co_return Status::Ok();
      if (!sent.ok()) co_return sent.status();
      plan->redo.push_back(part);  // Range ignored this time only: ask again
      continue;
    }
    if (!sent.ok()) co_return sent.status();
    const HttpResponse& response = *sent;
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
    SLUICE_CO_RETURN_IF_ERROR(plan->CheckSameObject(part, response));
  }
  co_return Status::Ok();
}

// Part 0, then the other parts as one of the workers. Its range is the first
// part; a server that ignores Range answers 200 with the whole object, which
// is then the download. An object known to be empty is fetched plainly: no
// range fits in it, and servers answer one differently (416, or s3rver's 206
// "bytes 0-0/0").
awaitable<Status> FirstPartThenMore(HttpClient* client, asio::random_access_file* file,
                                    const std::string* tmp, PartPlan* plan) {
  HttpRequest first;
  first.url = plan->url;
  first.headers = plan->headers;
  if (plan->expected_size != uint64_t{0}) {
    first.range = ByteRange::FromTo(0, plan->part_size - 1);
    first.if_range_ignored = HttpRequest::IgnoredRange::kToEnd;
  }
  first.expected_object_size = plan->expected_size;
  Result<HttpResponse> head =
      co_await SendToFile(client, first, file, 0, tmp, plan->write_pool, plan->env, plan->fill);
  if (!head.ok() && head.status().code() == StatusCode::kOutOfRange) {
    // 416 for bytes=0-...: an empty object. Fetch it plainly.
    first.range.reset();
    if (plan->fill != nullptr) plan->fill->Abandon();
    Status emptied = plan->env->Truncate(file->native_handle(), *tmp, 0);
    if (!emptied.ok()) co_return emptied.WithContext("GET " + RedactUrl(plan->url));
    head = co_await SendToFile(client, first, file, 0, tmp, plan->write_pool, plan->env, plan->fill);
  }
  if (!head.ok()) co_return head.status();
  plan->first_response = std::move(head).value();
  const HttpResponse& response = plan->first_response;
  if (response.status != 206) {
    plan->Learned(PartPlan::First::kWhole);
    co_return Status::Ok();
  }
  if (!response.object_size) {
    co_return IoError("GET " + response.final_url +
                      ": 206 without the object's total size in Content-Range");
  }
  if (plan->parts == 0) plan->SetTotal(*response.object_size);
  SLUICE_CO_RETURN_IF_ERROR(plan->CheckSameObject(0, response));
  plan->Learned(PartPlan::First::kRanged);
  co_return co_await PartWorker(client, file, tmp, plan);
}

// The download's one temporary by base/file.h's scheme, created
// kNewFileMode (asio's own open would create it 0777 & ~umask) and written in
// place when `path` is a temporary of this process already (the shard
// cache's); its descriptor is handed to `file`.
Result<TempFile> OpenTemp(const std::string& path, const std::string& url,
                          asio::random_access_file* file, Env* env) {
  Result<TempFile> temp = TempFile::Create(path, env);
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

  Env* env = options.env != nullptr ? options.env : Env::Default();
  asio::random_access_file file(executor);
  Result<TempFile> temp = OpenTemp(path, url, &file, env);
  if (!temp.ok()) co_return temp.status();
  TempFile& guard = *temp;
  boost::system::error_code ec;

  using First = PartPlan::First;
  asio::steady_timer first_known(executor, asio::steady_timer::time_point::max());
  TaskGroup workers(executor);
  PartPlan plan;
  plan.url = url;
  plan.headers = extra_headers;
  plan.part_size = options.part_size;
  plan.write_pool = options.write_pool;
  plan.env = env;
  plan.fill = options.fill;
  if (plan.fill != nullptr) plan.fill->Attach(guard.path());
  plan.expected_size = options.expected_size;
  plan.first_known = &first_known;
  plan.workers = &workers;
  // With the size known (the dataset's index), the parts after part 0 need
  // not wait for it: they start together (one round trip, not two, before
  // the link is full).
  // Workers: `concurrency`, or from a server that answers as if local
  // `local_concurrency` (no round trip to hide there; more connections only
  // cost CPU), each then asking one part of the object when its size is
  // known (fewer requests, each of which costs the server its own work).
  const bool local = options.local_concurrency > 0 && LocalLink();
  const size_t max_workers = static_cast<size_t>(
      local ? std::min(options.local_concurrency, options.concurrency) : options.concurrency);
  if (local && options.expected_size) {
    plan.part_size = std::max<uint64_t>(
        plan.part_size, (*options.expected_size + max_workers - 1) / max_workers);
  }
  if (options.expected_size) plan.SetTotal(*options.expected_size);

  // Worker 0 takes part 0; the others start now when the size is known,
  // else once part 0 has told it. The first error cancels the others (a
  // part sent before part 0 answered reports one only once part 0 has); so
  // does part 0 answered whole, and so does a cancellation of this call
  // (the join's).
  auto worker_done = [&](size_t i, std::exception_ptr e, Status s) {
    if (e) s = CancelledError("GET " + RedactUrl(url) + ": cancelled");
    if (plan.first == First::kWhole) {
      if (i == 0) workers.CancelAllExcept(0);  // their bytes are in part 0's
    } else if (!s.ok() && plan.first_error.ok()) {
      plan.first_error = s;
      workers.CancelAllExcept(i);
    }
  };
  auto spawn_parts = [&] {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(max_workers, plan.parts));
    while (workers.spawned() < want) {
      workers.Spawn(PartWorker(this, &file, &guard.path(), &plan), worker_done);
    }
  };
  workers.Spawn(FirstPartThenMore(this, &file, &guard.path(), &plan), worker_done);
  if (plan.parts > 1) spawn_parts();
  while (workers.running() > 0) {
    co_await workers.Wait();
    if (workers.join_cancelled() && plan.first_error.ok()) {
      plan.first_error = CancelledError("GET " + RedactUrl(url) + ": cancelled");
    }
    if (plan.first == First::kRanged && plan.first_error.ok()) spawn_parts();
  }
  if (workers.join_cancelled() || (plan.first != First::kWhole && !plan.first_error.ok())) {
    co_return plan.first_error;
  }
  HttpResponse response = plan.first_response;
  if (plan.first == First::kRanged) {
    response.body_bytes = plan.total;
  } else if (plan.other_bytes > 0) {
    // Part 0 came whole while other parts came ranged (a server that honours
    // Range only sometimes): their bytes may be another version's. Once more,
    // whole, alone. Readers of the fill have had bytes of either.
    if (plan.fill != nullptr) plan.fill->Abandon();
    Status emptied = env->Truncate(file.native_handle(), guard.path(), 0);
    if (!emptied.ok()) co_return emptied.WithContext("GET " + RedactUrl(url));
    HttpRequest whole;
    whole.url = url;
    whole.headers = extra_headers;
    whole.expected_object_size = options.expected_size;
    SLUICE_CO_ASSIGN_OR_RETURN(
        response, co_await SendToFile(this, std::move(whole), &file, 0, &guard.path(),
                                      options.write_pool, env, nullptr));
  }

  // The file's own errors name the download, as its requests' do.
  const std::string where = "GET " + RedactUrl(url);
  Result<struct stat> stat = env->StatOpen(file.native_handle(), guard.path());
  if (!stat.ok()) co_return stat.status().WithContext(where);
  const struct stat st = *stat;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (response.object_size && size != *response.object_size) {
    co_return CorruptError("GET " + response.final_url + ": wrote " + std::to_string(size) +
                           " bytes but the object has " +
                           std::to_string(*response.object_size));
  }
  file.close(ec);
  if (ec) co_return IoError("cannot close '" + guard.path() + "': " + ec.message());
  Status committed = guard.Commit();
  if (!committed.ok()) co_return committed.WithContext(where);
  co_return response;
}

#pragma GCC diagnostic pop

}  // namespace sluice
