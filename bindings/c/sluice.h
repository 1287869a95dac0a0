/* Sluice C ABI.
 *
 * Rules that hold for every function here:
 * - Nothing throws and nothing aborts on bad input: every fallible call
 *   returns a sluice_status. SLUICE_OK is 0.
 * - After a call fails, sluice_last_error() returns text that says what
 *   failed and where (path, shard, offset, column, what was expected). The
 *   text is thread-local and stays valid until the next failing call on the
 *   same thread. It never contains secrets.
 * - Handles are opaque. Each open or create call has one matching close or free,
 *   which accepts NULL. Closing a handle invalidates every view obtained
 *   through it.
 * - Strings are UTF-8 and NUL-terminated unless passed as sluice_bytes.
 * - Memory returned as `char*` through an out-parameter is owned by the
 *   caller and released with sluice_free().
 */
#ifndef SLUICE_H_
#define SLUICE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version N; the library is libsluice.so.N with that soname.
 * N goes up when a program compiled against the previous header could
 * misbehave with the new library (a function removed or its signature
 * changed, a struct layout, a value's number or meaning, an ownership,
 * lifetime or threading rule); additions leave it. ABI.md, beside this
 * header in the source tree, has the full rule. */
#define SLUICE_ABI_VERSION 4

typedef enum sluice_status {
  SLUICE_OK = 0,
  SLUICE_EINVAL = 1,        /* the caller's input is wrong */
  SLUICE_ENOTFOUND = 2,     /* file, object, column or sample does not exist */
  SLUICE_ECORRUPT = 3,      /* stored bytes malformed or truncated */
  SLUICE_EHASH = 4,         /* stored bytes do not match their hash */
  SLUICE_EUNIMPLEMENTED = 5,/* valid but unsupported (encoding, codec, ...) */
  SLUICE_EIO = 6,           /* the OS or a store failed */
  SLUICE_ERANGE = 7,        /* index or offset past the end */
  SLUICE_EPERM = 8,         /* credentials rejected */
  SLUICE_EUNAVAILABLE = 9,  /* retries exhausted */
  SLUICE_ETIMEDOUT = 10,
  SLUICE_ECANCELLED = 11,
  SLUICE_EINTERNAL = 12     /* a bug in Sluice */
} sluice_status;

/* A view of bytes owned by someone else; the function that hands one out
 * says how long it stays valid. */
typedef struct sluice_bytes {
  const uint8_t* data;
  uint64_t size;
} sluice_bytes;

/* SLUICE_ABI_VERSION of the loaded library; compare with the header's. */
uint32_t sluice_abi_version(void);

/* Library version, e.g. "0.1.0". Static storage. */
const char* sluice_version(void);

/* Text of the last error on this thread ("" if none). See the rules above. */
const char* sluice_last_error(void);

/* Releases memory that Sluice returned as char*. NULL is fine. */
void sluice_free(void* p);

/* 1 when `url` names a store other than the local file system ("s3://b/k",
 * "dbfs:/Volumes/...", "https://..."), 0 for a local path or a file:// URL
 * (also a path with ':' or "://" inside, such as "/data/a://b") or NULL. The
 * one rule every binding uses. Thread-safe. */
int sluice_is_store_url(const char* url);

/* The scheme of `url` in lower case ("s3", "gs", "dbfs", "file", ...), ""
 * for a local path, by the same rule as sluice_is_store_url; *scheme is a
 * copy the caller frees with sluice_free. The one scheme parser every
 * binding uses (which downloader or uploader serves a URL). Thread-safe. */
sluice_status sluice_url_scheme(const char* url, char** scheme);

/* The local path a path or file:// URL names ("file:///data/x" and
 * "file://localhost/data/x" are "/data/x", %XX escapes decoded, trailing
 * '/' removed); *path is a copy the caller frees with sluice_free.
 * SLUICE_EINVAL for a store URL (sluice_is_store_url), a file:// URL that
 * names another host or no path, or an empty path. Thread-safe. */
sluice_status sluice_local_path(const char* url, char** path);

/* The Databricks runtime's own token (the Databricks SDK's "runtime"
 * strategy): inside a Databricks runtime (DATABRICKS_RUNTIME_VERSION set)
 * the workspace's host and token live in the notebook's Python objects
 * (dbruntime), which no variable or file carries. A binding that can read
 * them registers a provider; the engine calls it, on any of its threads,
 * one call at a time, whenever it needs the token for a dbfs:/ URL (at
 * open, and again before the token expires: every 600 s when the provider
 * gives no expiry). A provider answers by calling
 * sluice_databricks_token_sink_put (host "https://..." with no path, the
 * bearer token, expires_at in unix seconds or 0 when unknown) or
 * sluice_databricks_token_sink_fail (why it has none, no secret) on the
 * sink it is given, which is valid only during the call, and returns 0 (a
 * non-zero return without either is a failure too). The token is sent only
 * to its host: a DATABRICKS_HOST (or profile host) that differs passes the
 * runtime over; with no host configured the runtime's is used. */
typedef struct sluice_databricks_token_sink sluice_databricks_token_sink;
typedef int (*sluice_databricks_token_fn)(void* user_data, sluice_databricks_token_sink* sink);

/* Registers `fn` with `user_data` (which must stay valid until replaced)
 * for the process; NULL clears it. Waits for a call of the previous
 * provider in flight, so must not be called from inside a provider. A
 * forked child keeps the provider. Thread-safe. */
sluice_status sluice_set_databricks_runtime_token_provider(sluice_databricks_token_fn fn,
                                                           void* user_data);

/* A provider's answer (see above); strings are copied. SLUICE_EINVAL for a
 * NULL argument. */
sluice_status sluice_databricks_token_sink_put(sluice_databricks_token_sink* sink,
                                               const char* host, const char* token,
                                               int64_t expires_at);
sluice_status sluice_databricks_token_sink_fail(sluice_databricks_token_sink* sink,
                                                const char* message);

/* ---------------------------------------------------------------------------
 * Reading a dataset folder (index.json + shards; MDS, JSONL, CSV/TSV, and
 * merged indexes whose shards live in sub-folders), or a Parquet file or a
 * folder of Parquet files (no index.json: every row group is a shard).
 * A handle may be used from several threads at once. Shards are loaded on
 * first use (read, decompressed, hash-checked when asked) and kept until the
 * handle is closed, so every view stays valid until sluice_dataset_close. */

typedef struct sluice_dataset sluice_dataset;

/* Check every shard file against a hash recorded in index.json on load. */
#define SLUICE_OPEN_VERIFY_HASHES 1u
/* Every MDS encoding that is not built in is the caller's own: its fields
 * are handed out as stored, and the caller decides whether it can decode
 * them (the Python package, which fails when such a sample is read, as
 * Mosaic does). */
#define SLUICE_OPEN_ANY_CUSTOM_ENCODING 2u
/* Refuse an MDS column whose decoding runs code from the data ("pkl"),
 * as Mosaic does without allow_unsafe_types: SLUICE_EINVAL with Mosaic's
 * text, "ValueError: Column x contains an unsafe type: pkl. To proceed
 * anyway, set ``allow_unsafe_types=True``." (the engine's one check, also
 * sluice_stream_open's without "allow_unsafe_types"). */
#define SLUICE_OPEN_REFUSE_UNSAFE_TYPES 4u

/* Opens the folder `path` (its index.json; shards are loaded on first use).
 * Without `path`/index.json: `path` a Parquet file, or a folder whose files
 * named *.parquet are the dataset (sorted by path; names starting with '_'
 * or '.', such as Spark's _SUCCESS and .crc files, left out); their footers
 * are read here, and a field the reader does not support (a struct, a map)
 * fails here with SLUICE_EUNIMPLEMENTED naming the file and column.
 * An MDS column whose encoding is neither built in (sluice_mds_encoding_names)
 * nor the caller's own fails here with SLUICE_EUNIMPLEMENTED naming the
 * index.json, the shard, the column and the encoding: a typo or a damaged
 * index must not hand out bytes as data. */
sluice_status sluice_dataset_open(const char* path, uint32_t flags, sluice_dataset** out);
/* As sluice_dataset_open, with the caller's own MDS encodings (Mosaic lets
 * users register encodings under new names), whose fields are handed out as
 * stored for the caller to decode: `custom_encodings[0..num_custom_encodings)`
 * are names; a column's encoding is one when it equals a name or its part
 * before the first ':' does ("complex128" covers "complex128:le"). The
 * array is read during the call only; NULL with 0 is none. */
sluice_status sluice_dataset_open_with_encodings(const char* path, uint32_t flags,
                                                 const char* const* custom_encodings,
                                                 uint32_t num_custom_encodings,
                                                 sluice_dataset** out);
void sluice_dataset_close(sluice_dataset* ds);

/* Total samples over all shards. */
uint64_t sluice_dataset_num_samples(const sluice_dataset* ds);
uint32_t sluice_dataset_num_shards(const sluice_dataset* ds);
/* Shard `shard`'s sample count, as its index entry (or Parquet row group)
 * says. SLUICE_ERANGE when shard >= sluice_dataset_num_shards. */
sluice_status sluice_dataset_shard_samples(const sluice_dataset* ds, uint32_t shard,
                                           uint64_t* samples);
/* Columns in stored order (MDS: sorted by name; Parquet: the file's
 * top-level fields in schema order). Names and encodings are owned by the
 * handle. A Parquet column's encoding says its type: MDS's names where the
 * bytes are MDS's ("int8".."int64", "uint8".."uint64", "float16",
 * "float32", "float64": the little-endian value, which sluice_decode_int64 /
 * _uint64 / _double read; "str": UTF-8; "bytes"), and "bool" (1 byte 0/1),
 * "date32" (int32 days), "timestamp[ms|us|ns]" and "timestamp[U,UTC]" (int64
 * in that unit; INT96 as ns), "decimal(p,s)" (the value's text),
 * "list<T>" for T of a fixed width above (the values packed little-endian),
 * and other lists ("list<str>", "list<list<int32>>": the value as JSON
 * text); the full table is in formats/parquet/field_encoding.h. */
uint32_t sluice_dataset_num_columns(const sluice_dataset* ds);
const char* sluice_dataset_column_name(const sluice_dataset* ds, uint32_t column);
const char* sluice_dataset_column_encoding(const sluice_dataset* ds, uint32_t column);
/* "mds", "json", "csv", "tsv", "xsv" or "parquet" (of the first shard). */
const char* sluice_dataset_format(const sluice_dataset* ds);

/* Fills fields[0..num_columns) with views of sample `sample`'s stored bytes,
 * one per column: MDS: the field's stored bytes; CSV/TSV: the field's text;
 * JSONL: the value's JSON text (Sluice-owned copy); Parquet: the value in
 * its column's encoding (above). A Parquet null (a null value or a null
 * list) is a field whose `data` is NULL (size 0); an empty string or list
 * has a non-NULL `data` and size 0. A row whose packed list ("list<int32>")
 * holds a null element fails with SLUICE_EUNIMPLEMENTED naming the file,
 * row group, column and row: packed values cannot hold it. `num_fields` must
 * equal sluice_dataset_num_columns. Views are valid until the handle is
 * closed. */
sluice_status sluice_dataset_get(sluice_dataset* ds, uint64_t sample,
                                 sluice_bytes* fields, uint32_t num_fields);

/* Null elements of Parquet packed lists ("list<int32>" etc.; see
 * formats/parquet/field_encoding.h), which sluice_dataset_get refuses (as
 * said above): sluice_dataset_get_masked is sluice_dataset_get that reads
 * such a row, its field being the packed values with zero bytes where an
 * element is null, and sets *num_masked to how many of its fields hold a
 * null element (0 for most rows: nothing more to ask). sluice_dataset_masked
 * gives the i-th such field of the last sluice_dataset_get_masked on this
 * thread: its column and validity (one byte per element, 0 = null; a view
 * valid as the fields'); SLUICE_ERANGE for i >= *num_masked. */
sluice_status sluice_dataset_get_masked(sluice_dataset* ds, uint64_t sample, sluice_bytes* fields,
                                        uint32_t num_fields, uint32_t* num_masked);
sluice_status sluice_dataset_masked(const sluice_dataset* ds, uint32_t i, uint32_t* column,
                                    sluice_bytes* validity);

/* For a caller that copies every field of a sample at once (Python's
 * LocalDataset): sluice_dataset_get (num_masked NULL) or
 * sluice_dataset_get_masked (num_masked non-NULL), except that a large
 * Parquet value that straddles the pieces of a snappy page (an image of
 * 32 KiB or more in a page of incompressible bytes) is copied nowhere by the
 * engine: its entry in `fields` has the value's size and a `data` pointer
 * (non-NULL) that must NOT be read, and the caller copies the value with
 * sluice_dataset_copy_pieced, its only copy (sluice_dataset_get copies it
 * once more, into the handle's memory, so that its view lasts until close).
 * *num_pieced says how many fields of the sample are so (0 for most rows
 * and every other format: nothing more to ask), and pieced_columns (NULL,
 * or room for num_fields entries) gets their columns, the i-th such
 * field's at [i]. The other views, and the masks, are as
 * sluice_dataset_get's and sluice_dataset_get_masked's. */
sluice_status sluice_dataset_get_pieces(sluice_dataset* ds, uint64_t sample, sluice_bytes* fields,
                                        uint32_t num_fields, uint32_t* num_masked,
                                        uint32_t* num_pieced, uint32_t* pieced_columns);
/* Copies the i-th such field of the last sluice_dataset_get_pieces on this
 * thread (i < its *num_pieced; any sluice_dataset_get* call on this thread
 * ends them) into dst[0..size), size being its field's, and sets *column to
 * its column. With dst NULL and capacity 0 it only sets *column (to size a
 * buffer by fields[*column].size). SLUICE_ERANGE for i past them;
 * SLUICE_EINVAL when capacity is smaller than the value (nothing written).
 * `ds` must be the handle read, still open. */
sluice_status sluice_dataset_copy_pieced(const sluice_dataset* ds, uint32_t i, uint32_t* column,
                                         void* dst, uint64_t capacity);

/* The whole stored sample: MDS sample bytes, or the JSONL/CSV line with its
 * newline; Parquet rows have none (size 0). Valid until the handle is
 * closed. */
sluice_status sluice_dataset_get_raw(sluice_dataset* ds, uint64_t sample, sluice_bytes* out);

/* Decodes one stored field into a caller-owned scalar. `encoding` is the
 * column's encoding. int64: int, int8..int64, uint8..uint32 and str_int
 * within int64; uint64: uint8..uint64; double: float16/32/64, str_float. */
sluice_status sluice_decode_int64(const char* encoding, sluice_bytes field, int64_t* out);
sluice_status sluice_decode_uint64(const char* encoding, sluice_bytes field, uint64_t* out);
sluice_status sluice_decode_double(const char* encoding, sluice_bytes field, double* out);

/* An ndarray field: dtype name (static storage), shape, and a view of the
 * C-order little-endian values inside `field` (valid as long as `field`). */
#define SLUICE_MAX_NDIM 63
typedef struct sluice_ndarray {
  const char* dtype;
  uint32_t ndim;
  uint64_t shape[SLUICE_MAX_NDIM];
  sluice_bytes data;
} sluice_ndarray;
sluice_status sluice_decode_ndarray(const char* encoding, sluice_bytes field, sluice_ndarray* out);

/* ---------------------------------------------------------------------------
 * Writing a dataset folder, byte-compatible with Mosaic's writers.
 * A writer handle is not thread-safe: one thread at a time. */

typedef struct sluice_writer sluice_writer;

/* Zero-initialise and set what you need: every zero field means its default. */
typedef struct sluice_writer_options {
  const char* format;            /* "mds" (NULL = "mds"), "json", "csv", "tsv", "xsv" */
  const char* compression;       /* NULL = none; "zstd", "zstd:19", "br", "gz", "bz2", "snappy" */
  const char* const* hashes;     /* algorithm names, e.g. "sha1", "xxh64" */
  uint32_t num_hashes;
  uint64_t size_limit;           /* bytes; 0 = Mosaic's default (1 << 26) */
  uint32_t no_size_limit;        /* 1 = one shard whatever the size (size_limit=None) */
  /* Text formats (json, csv, tsv, xsv): the line terminator, NULL = "\n"
   * (Mosaic's `newline`); recorded as "newline" in index.json. */
  const char* newline;
  /* xsv only, required there (Mosaic's XSVWriter `separator`); csv (",")
   * and tsv ("\t") have their own: leave NULL. */
  const char* separator;
  /* NULL = local only. Otherwise a remote folder (s3://, gs://, azure://,
   * file://, dbfs:/Volumes/..., or a local path): every shard file is
   * uploaded to <remote>/<basename> in the background as soon as it is
   * finished, at most `max_workers` at once, and index.json last, once
   * every shard is up (sluice_writer_finish waits for all of it). Upload
   * errors name the local file and the redacted remote URL; the first one
   * is returned by the next sluice_writer_write or sluice_writer_finish.
   * Credentials come from the store's environment variables. Uploads run
   * on the library's event loop thread; a writer with a remote must be used
   * in the process that opened it (not across fork). */
  const char* remote;
  uint32_t keep_local;           /* with remote: 1 = keep local files once uploaded */
  uint32_t max_workers;          /* with remote: concurrent uploads; 0 = min(32, cpus + 4) */
  uint32_t upload_attempts;      /* with remote: attempts per request (Mosaic's `retry`); 0 = 2 */
  /* MDS only: a user's own encodings (Mosaic lets users register Encoding
   * classes under new names), which the caller encodes itself: their names
   * (no built-in name, nor "name:..." of one) and for each the size of
   * every field (index.json's column_sizes entry), or -1 when fields vary
   * in size. Their fields are stored as given; readers hand them out as
   * stored. Arrays of num_custom_encodings entries, read during
   * sluice_writer_open only. */
  const char* const* custom_encodings;
  const int64_t* custom_encoding_sizes;
  uint32_t num_custom_encodings;
} sluice_writer_options;

/* Opens a writer into folder `out_dir` (created if missing; with `remote`
 * the local staging folder). Columns are given in any order; MDS stores
 * them sorted by name as Mosaic does. `options` may be NULL for an
 * uncompressed MDS writer with defaults. A remote that cannot be opened
 * (unknown scheme, missing credentials) fails here. */
sluice_status sluice_writer_open(const char* out_dir, const char* const* column_names,
                                 const char* const* column_encodings, uint32_t num_columns,
                                 const sluice_writer_options* options, sluice_writer** out);

/* Appends one sample. fields[i] belongs to column i as given at open.
 * MDS: the field's stored bytes (see sluice_encode_* for scalars);
 * JSON/CSV/TSV/XSV: the value as text ("42", "0.5", "hello"); an int as
 * Python's int() reads it, of any size up to 4300 digits (Python's limit);
 * a JSON int column also takes "true" / "false" (a Python bool, which
 * Mosaic's JSONWriter stores as such). The bytes are copied before the call
 * returns. */
sluice_status sluice_writer_write(sluice_writer* w, const sluice_bytes* fields, uint32_t num_fields);
/* MDS only: appends one sample whose field i is given as kinds[i] says
 * (SLUICE_VALUE_*; fields[i] the value's bytes), encoded by the engine as
 * sluice_mds_encode_value encodes it: one call a sample for values the
 * binding would otherwise encode one call a field. A value a column refuses
 * is SLUICE_EINVAL "column 'x': <the encoder's text>", and nothing of the
 * sample is written. */
sluice_status sluice_writer_write_values(sluice_writer* w, const sluice_bytes* fields,
                                         const uint32_t* kinds, uint32_t num_fields);

/* Writes the last shard and index.json; with a remote, waits until every
 * file is uploaded (index.json last). Further writes fail. */
sluice_status sluice_writer_finish(sluice_writer* w);

/* Frees the writer. Shards already written stay; index.json exists only if
 * sluice_writer_finish succeeded. Queued uploads are dropped; those in
 * flight are waited for. */
void sluice_writer_close(sluice_writer* w);

/* With a remote: files and bytes uploaded so far (0 without one). */
sluice_status sluice_writer_uploaded(const sluice_writer* w, uint64_t* files, uint64_t* bytes);

/* Small whole objects in a remote folder (e.g. index.json for merge_index
 * over remote sub-datasets). `folder_url`: any URL a writer's `remote`
 * takes; `key`: a relative name inside it ("part0/index.json"). Each call
 * blocks until done; calls may come from several threads at once.
 * Credentials come from the store's environment. */

/* Reads object `key`; *data (caller frees with sluice_free, NUL-terminated
 * for convenience) and *size. SLUICE_ENOTFOUND if it does not exist. */
sluice_status sluice_remote_read(const char* folder_url, const char* key, char** data,
                                 uint64_t* size);
/* Streams object `key` into the local file `path` (its folder must exist)
 * without holding it in memory: the engine writes it under its own
 * temporary name beside `path` and renames it into place when whole, so
 * `path` never holds part of an object and a failed download leaves no
 * temporary behind. SLUICE_ENOTFOUND if the object does not exist. */
sluice_status sluice_remote_read_to_file(const char* folder_url, const char* key,
                                         const char* path);
/* Writes `size` bytes as object `key`, replacing it. */
sluice_status sluice_remote_write(const char* folder_url, const char* key, const uint8_t* data,
                                  uint64_t size);
/* Keys of every object under `prefix` ("" or NULL = all) as a JSON array of
 * strings, sorted; caller frees *keys_json with sluice_free. */
sluice_status sluice_remote_list(const char* folder_url, const char* prefix, char** keys_json);

/* Local files written as the engine writes its own (cache, index, state):
 * the bytes go to a hidden temporary in the final file's folder,
 * ".<name>.sluice-tmp.<pid>.<start>.<seq>" (the engine's one rule, which its
 * sweeps recognise and delete once the owning process is gone), renamed over
 * `path` when whole: a reader sees the old file or the whole new one, a
 * crash never leaves a file under `path` that looks complete, and after an
 * error no temporary is left. `path`'s folder must exist. Thread-safe; each
 * call blocks until done; errors name the file. */

/* Writes `size` bytes at `data` to `path`, replacing it. */
sluice_status sluice_file_write(const char* path, const uint8_t* data, uint64_t size);
/* Copies the file `from` (read to its end) onto `to`, replacing it; *size
 * (NULL allowed) the bytes copied. A missing `from` is SLUICE_ENOTFOUND. */
sluice_status sluice_file_copy(const char* from, const char* to, uint64_t* size);

/* ---------------------------------------------------------------------------
 * Where this process sits, by Mosaic's rule (its World.detect): RANK
 * (default 0), WORLD_SIZE (1) and LOCAL_WORLD_SIZE (1: without it every
 * rank is a node of its own); LOCAL_RANK, which Mosaic never reads, only
 * when LOCAL_WORLD_SIZE is set, and then it must be rank % LOCAL_WORLD_SIZE.
 * The same rule as a sluice_stream_open config without "world". A variable
 * that is not an integer, or values that disagree (rank outside the world,
 * WORLD_SIZE not a multiple of LOCAL_WORLD_SIZE), are SLUICE_EINVAL naming
 * them. Reads the environment (getenv): safe from several threads as long
 * as none of them changes it. */
sluice_status sluice_world_from_env(int64_t* num_nodes, int64_t* ranks_per_node, int64_t* rank);

/* The world of sluice_world_from_env with explicit values first:
 * world_json is a JSON object with any of "rank", "world_size",
 * "local_rank" and "local_world_size" (integers, or null), the "world" of a
 * sluice_stream_open config. With any key given the environment is not
 * read (a world given is the caller's alone): the keys not given take the
 * defaults (rank 0, world_size 1, local_world_size 1, local_rank rank %
 * local_world_size). NULL or {}: sluice_world_from_env. An unknown key
 * or a value that is not an integer is SLUICE_EINVAL naming the key; other
 * errors and thread safety as sluice_world_from_env. For a process that
 * reads one rank's samples without torchrun's variables (a Ray task
 * reading partition i of n): pass the same "world" to sluice_stream_open. */
sluice_status sluice_world_resolve(const char* world_json, int64_t* num_nodes,
                                   int64_t* ranks_per_node, int64_t* rank);

/* What a binding should warn of in the world sluice_world_from_env reads:
 * WORLD_SIZE above 1 without RANK (PyTorch Lightning's own launcher sets
 * WORLD_SIZE and LOCAL_RANK but not RANK) makes every process rank 0, each
 * reading rank 0's samples. That stays Mosaic's rule (no error); *warning is
 * then a text naming the variables and the fix (launch with torchrun), a
 * copy the caller frees with sluice_free, else NULL. Errors and thread
 * safety as sluice_world_from_env. */
sluice_status sluice_world_env_warning(char** warning);

/* ---------------------------------------------------------------------------
 * Shard formats, as the engine's format descriptors describe them
 * (formats/dataset/format_descriptor.h), so that a binding asks what a
 * format has instead of comparing its name. */

/* What a field read from a shard of the format holds: the column's stored
 * bytes, decoded by its MDS encoding ("mds", "raw"); the member's JSON value
 * text ("json", JSONL); the field's text between separators ("csv", "tsv",
 * "xsv"); the value in its column's Parquet field encoding, NULL data for a
 * null ("parquet", see sluice_dataset_column_encoding). */
#define SLUICE_FIELD_STORED_BYTES 0
#define SLUICE_FIELD_JSON_TEXT 1
#define SLUICE_FIELD_PLAIN_TEXT 2
#define SLUICE_FIELD_PARQUET_VALUE 3

/* *field_form (one of SLUICE_FIELD_*) and *has_meta (1 when each shard has
 * a meta file beside its data file, else 0) of the shard format named
 * `format` (as index.json and sluice_stream_format name it). An unknown
 * name is SLUICE_EUNIMPLEMENTED. Either output may be NULL. Thread-safe. */
sluice_status sluice_format_info(const char* format, int* field_form, int* has_meta);

/* ---------------------------------------------------------------------------
 * index.json, read and written by the engine (formats/index), so that no
 * binding parses it. Pure functions of their arguments: thread-safe; every
 * output is a copy the caller frees with sluice_free (NUL-terminated).
 * Errors name `source`, the shard and the field ("corrupt: <source>: shard
 * 3: field 'raw_data.bytes': ..."): SLUICE_ECORRUPT for malformed JSON
 * ("<source>: malformed JSON: ...") or a missing, mistyped or unsafe field,
 * SLUICE_EUNIMPLEMENTED for an unknown shard format or version. */

/* The "shards" of the index.json text (`size` bytes at `text`) as a JSON
 * array, one object per shard as the engine writes an entry
 * (json.dumps(entry, sort_keys=True)): every key of the shard's format
 * present, files as {"basename", "bytes", "hashes"} or null. */
sluice_status sluice_index_shards(const uint8_t* text, uint64_t size, const char* source,
                                  char** shards_json, uint64_t* json_size);

/* Mosaic's merge_index over `num_parts` sub-datasets, in order: part i is
 * the index.json text texts[i] (sizes[i] bytes; named sources[i] in errors)
 * whose files' basenames get prefixes[i] in front ("part0" makes
 * "shard.00000.mds" "part0/shard.00000.mds"; "" leaves them). *out is the
 * merged index.json ({"version": 2, "shards": [...]}), byte-identical to
 * Mosaic's for sub-indexes its writers wrote; keys the engine does not know
 * are not carried over. A prefix that makes a basename unsafe (absolute,
 * "..") is SLUICE_EINVAL. */
sluice_status sluice_index_merge(const uint8_t* const* texts, const uint64_t* sizes,
                                 const char* const* sources, const char* const* prefixes,
                                 uint32_t num_parts, char** out, uint64_t* out_size);

/* Shard compression and hashes, as index.json names them (Mosaic's names).
 * Thread-safe; every output is a copy the caller frees with sluice_free
 * (NUL-terminated for convenience).
 * A compression name is a family ("zstd", "br", "gz", "bz2", "snappy") or
 * "<family>:<level>" (br 0-11, bz2 1-9, gz 0-9, zstd 1-22; none for snappy):
 * an unknown family is SLUICE_EUNIMPLEMENTED, a bad level SLUICE_EINVAL. */
sluice_status sluice_compression_check(const char* name);
/* One compressed stream of `size` bytes at `data`. */
sluice_status sluice_compress(const char* name, const uint8_t* data, uint64_t size, char** out,
                              uint64_t* out_size);
/* Decompresses a whole stream; output beyond `max_output` bytes, truncated
 * or corrupt input, or bytes after the stream are SLUICE_ECORRUPT. Memory
 * grows with the output produced, never with max_output alone. */
sluice_status sluice_decompress(const char* name, const uint8_t* data, uint64_t size,
                                uint64_t max_output, char** out, uint64_t* out_size);
/* The supported hash algorithms as a sorted JSON array of names. */
sluice_status sluice_hash_names(char** names_json);
/* The built-in MDS column encoding names as a JSON array ("bytes", "str",
 * ..., "ndarray"; "ndarray" also takes ":dtype" and ":dtype:shape"): what
 * the readers and writers know without the caller's own encodings. */
sluice_status sluice_mds_encoding_names(char** names_json);
/* 1 when decoding `encoding` runs code from the data ("pkl", unpickling),
 * which Mosaic refuses without allow_unsafe_types; 0 for any other name
 * (NULL included). The engine's one list. Thread-safe. */
int sluice_mds_encoding_is_unsafe(const char* encoding);
/* *size: the column_sizes entry Mosaic writes for a column of `encoding`
 * (the bytes of every field: "int" 8, "float16" 2, "ndarray:uint8:2,3" 6),
 * or -1 when fields vary in size ("str", "ndarray"). A name that is not
 * built in, or a malformed ndarray suffix (unknown dtype, a dimension below
 * 1, more than 63), is SLUICE_EUNIMPLEMENTED naming it. The engine's
 * layouts, which bindings check their own encoders against. Thread-safe. */
sluice_status sluice_mds_encoding_size(const char* encoding, int64_t* size);
/* The dtype and shape an ndarray encoding names ("ndarray",
 * "ndarray:int16", "ndarray:int16:2,3"), parsed as the readers and writers
 * parse it: out->dtype (static storage) NULL when it names none, out->ndim 0
 * when it names no shape, out->data empty. A malformed one is
 * SLUICE_EUNIMPLEMENTED as in sluice_mds_encoding_size; another encoding is
 * SLUICE_EINVAL. The engine's one parser, which bindings ask instead of
 * parsing. Thread-safe. */
sluice_status sluice_mds_ndarray_encoding(const char* encoding, sluice_ndarray* out);
/* Lower-case hex digest of `size` bytes at `data`; an unknown algorithm is
 * SLUICE_EUNIMPLEMENTED. */
sluice_status sluice_hash(const char* algo, const uint8_t* data, uint64_t size, char** hex);

/* ---------------------------------------------------------------------------
 * One MDS field of a built-in encoding, written and read by the engine: the
 * one owner of every built-in encoding's byte layout (bindings make only
 * their own objects from these). Every encoder writes the field into `buf`
 * (capacity `cap`) and sets *len; a short buffer is SLUICE_ERANGE with *len
 * the size needed. A value the encoding cannot take (wrong kind, out of
 * range, invalid UTF-8 or JSON, a pixel count the mode does not have) is
 * SLUICE_EINVAL naming the encoding ("int8 encoding: value 300 is out of
 * range for int8"); a name that is not built in or malformed is
 * SLUICE_EUNIMPLEMENTED. Decoders' views point into `field` (valid as long
 * as it is); a malformed field is SLUICE_ECORRUPT. All thread-safe. */

/* Scalars: int, int8..int64, uint8..uint64 (range-checked), float16/32/64
 * (numpy's rounding), str_int (decimal text), str_float (Python's repr). */
sluice_status sluice_encode_int64(const char* encoding, int64_t value, uint8_t* buf, uint64_t cap, uint64_t* len);
sluice_status sluice_encode_uint64(const char* encoding, uint64_t value, uint8_t* buf, uint64_t cap, uint64_t* len);
sluice_status sluice_encode_double(const char* encoding, double value, uint8_t* buf, uint64_t cap, uint64_t* len);
/* The numpy layout of an encoding whose every field is one fixed-size
 * little-endian numpy value: out->dtype a numpy name (static storage),
 * out->ndim and out->shape its shape (0: a scalar: "int" is "int64",
 * "ndarray:uint8:2,3" is uint8 of shape (2, 3)); out->dtype NULL for any
 * other encoding. Bindings read such fields (and columns of them) as arrays
 * of that dtype. */
sluice_status sluice_mds_field_layout(const char* encoding, sluice_ndarray* out);
/* A value handed to the engine for one field (sluice_mds_encode_value,
 * sluice_writer_write_values), as `kind` says:
 * - SLUICE_VALUE_FIELD: the field's stored bytes, kept as they are;
 * - SLUICE_VALUE_BYTES: bytes, pkl, jpeg, png store them as they are; str,
 *   str_int, str_decimal store the UTF-8 text after checking it (valid
 *   UTF-8; an integer's decimal text; a Decimal's text); json takes the text
 *   json.dumps wrote and stores it as json.dumps writes the value it parses
 *   to;
 * - SLUICE_VALUE_INT64, SLUICE_VALUE_UINT64, SLUICE_VALUE_DOUBLE: 8 bytes,
 *   the number in the host's (little-endian) order, encoded as
 *   sluice_encode_int64 / _uint64 / _double encode it. */
#define SLUICE_VALUE_FIELD 0
#define SLUICE_VALUE_BYTES 1
#define SLUICE_VALUE_INT64 2
#define SLUICE_VALUE_UINT64 3
#define SLUICE_VALUE_DOUBLE 4
sluice_status sluice_mds_encode_value(const char* encoding, uint32_t kind, const uint8_t* value,
                                      uint64_t size, uint8_t* buf, uint64_t cap, uint64_t* len);
/* How a field of `encoding` holds its value, for a binding that reads many:
 * SLUICE_MDS_FIELD_VALUES: one fixed-size numpy value (sluice_mds_field_layout);
 * SLUICE_MDS_FIELD_TEXT: the whole field is the value's UTF-8 text (str,
 *   str_int, str_float, str_decimal, json);
 * SLUICE_MDS_FIELD_BYTES: the whole field is the value's bytes (bytes, pkl,
 *   jpeg, png);
 * SLUICE_MDS_FIELD_FRAMED: anything else (pil, lists, ndarray with a
 *   header): read each with its sluice_mds_decode_* / sluice_mds_ndarray_decode.
 * The decoders give the same values (tested). */
#define SLUICE_MDS_FIELD_VALUES 0
#define SLUICE_MDS_FIELD_TEXT 1
#define SLUICE_MDS_FIELD_BYTES 2
#define SLUICE_MDS_FIELD_FRAMED 3
sluice_status sluice_mds_field_form(const char* encoding, uint32_t* form);
/* The value inside a field of those encodings and of str_float: the text of
 * the text kinds (checked UTF-8), the stored bytes of the others. */
sluice_status sluice_mds_decode_bytes(const char* encoding, const uint8_t* field, uint64_t size,
                                      sluice_bytes* out);
/* A raw PIL image ("pil"): width, height, mode ("RGB"), pixels (Pillow's
 * tobytes(), exactly as many as a mode the engine knows has). The same
 * layout is each element of "list[pil]". */
typedef struct {
  uint32_t width;
  uint32_t height;
  sluice_bytes mode;
  sluice_bytes pixels;
} sluice_mds_pil;
sluice_status sluice_mds_encode_pil(const char* encoding, uint32_t width, uint32_t height,
                                    const char* mode, const uint8_t* pixels, uint64_t size,
                                    uint8_t* buf, uint64_t cap, uint64_t* len);
sluice_status sluice_mds_decode_pil(const char* encoding, const uint8_t* field, uint64_t size,
                                    sluice_mds_pil* out);
/* Lists of encoded elements: list[pil] (each a "pil" field), list[jpeg],
 * list[png], jpeg_array/jpegarray (each a file's bytes). The decoder fills
 * items[0..*count); more items than `cap` is SLUICE_ERANGE with *count the
 * number held (bounded by the field's size). */
sluice_status sluice_mds_encode_list(const char* encoding, const sluice_bytes* items,
                                     uint32_t count, uint8_t* buf, uint64_t cap, uint64_t* len);
sluice_status sluice_mds_decode_list(const char* encoding, const uint8_t* field, uint64_t size,
                                     sluice_bytes* items, uint32_t cap, uint32_t* count);

/* An MDS ndarray column, as sluice_mds_ndarray_encoding describes it
 * (`column`: dtype NULL when each field stores its dtype, ndim 0 when each
 * stores its shape; a shape without a dtype is Mosaic's NDArray(shape=...)).
 * The engine alone writes and reads the header such a field starts with:
 * the dtype code unless the column fixes the dtype, then the shape byte
 * (ndim << 2 | word size code) and the dimensions in the smallest word that
 * holds the largest, unless the column fixes the shape; the C-order
 * little-endian values follow. Thread-safe. */
/* The header of a field holding an array of `dtype` (a numpy name: "int16")
 * and shape shape[0..ndim), into `buf` (capacity `cap`;
 * SLUICE_MAX_NDARRAY_HEADER bytes are always enough), *len its size. An
 * unknown dtype, a dtype or shape other than the column's, 0 or more than 63
 * dimensions, a dimension of 0 or values of 4 GiB or more are SLUICE_EINVAL
 * naming what is wrong; a short buffer is SLUICE_ERANGE (*len still set). */
#define SLUICE_MAX_NDARRAY_HEADER 506
sluice_status sluice_mds_ndarray_header(const sluice_ndarray* column, const char* dtype,
                                        uint32_t ndim, const uint64_t* shape, uint8_t* buf,
                                        uint64_t cap, uint64_t* len);
/* Reads a field of `column` (`size` bytes at `field`) as
 * sluice_decode_ndarray does: out->data views the values, which end the
 * field (they start `size - out->data.size` bytes in; valid as long as
 * `field`); a malformed header or values of another size are
 * SLUICE_ECORRUPT. */
sluice_status sluice_mds_ndarray_decode(const sluice_ndarray* column, const uint8_t* field,
                                        uint64_t size, sluice_ndarray* out);

/* ---------------------------------------------------------------------------
 * Epoch planning, identical to mosaicml-streaming for the same inputs.
 * A plan is immutable once created: safe to read from several threads. */

typedef struct sluice_plan sluice_plan;

/* Plans one epoch from a JSON object shaped like the `config` object of
 * Mosaic's order vectors: {"streams": [{"shard_sizes": [...], "proportion"|
 * "repeat"|"choose": ...}], "world": {"num_nodes", "ranks_per_node",
 * "workers_per_rank"}, "batch_size", "shuffle", "shuffle_algo", ...,
 * "epoch", "sample_in_epoch", "mixture", "mixture_interpolation" (as for
 * sluice_stream_open), "mixture_past" (the schedules a resume replaced, as
 * a state's "sluice_order" parts.mixture_past holds them)}. Configurations Mosaic rejects fail with
 * SLUICE_EINVAL and a message that starts with Mosaic's error type. */
/* Mosaic's default num_canonical_nodes for `physical_nodes` (>= 1) nodes
 * and the shuffle algorithm named `shuffle_algo` ("py1e", "py1s", ...):
 * what a plan without "num_canonical_nodes" takes. An unknown algorithm
 * is SLUICE_EINVAL with Mosaic's KeyError text. Thread-safe. */
sluice_status sluice_default_num_canonical_nodes(const char* shuffle_algo, int64_t physical_nodes,
                                                 int64_t* out);
sluice_status sluice_plan_create(const char* config_json, sluice_plan** out);
void sluice_plan_free(sluice_plan* plan);

/* shape[5] = (nodes, ranks per node, workers per rank, batches per worker,
 * batch size). */
void sluice_plan_shape(const sluice_plan* plan, uint64_t shape[5]);

/* The sample ids worker `worker` of rank `rank` on node `node` reads, in
 * order, with -1 padding removed. *ids points into the plan (valid until
 * sluice_plan_free); *count is their number. */
sluice_status sluice_plan_worker_ids(const sluice_plan* plan, uint32_t node, uint32_t rank,
                                     uint32_t worker, const int64_t** ids, uint64_t* count);

/* {"work_shape": [...], "work": [...]} exactly as Mosaic's order vectors
 * hold it. Caller frees *out_json with sluice_free. */
sluice_status sluice_plan_to_json(const sluice_plan* plan, char** out_json);

/* The samples of global steps [first_step, end_step) of the epoch that
 * `config_json` (sluice_plan_create's object, with "batch_size") plans: at
 * step s each rank takes the batch its torch DataLoader, over the world's
 * "workers_per_rank" workers, hands out s-th (worker s mod workers first),
 * counted from "sample_in_epoch". Of global rank `rank`, or every rank when
 * `rank` < 0. *out_rows holds *out_count rows of three int64 (step, global
 * rank, global sample id), step by step, rank by rank, each batch in its
 * order (what `sluice plan DATASET --steps` prints, before locating ids);
 * the caller frees it with sluice_free. Plans only the nodes of the ranks
 * asked for. Steps past every rank's last are left out; SLUICE_EINVAL when
 * first_step is at or past the last (saying how many steps the ranks
 * take), for first_step < 0 or >= end_step, a rank outside the world, or the
 * planner's errors. Thread-safe. */
sluice_status sluice_plan_steps(const char* config_json, int64_t rank, int64_t first_step,
                                int64_t end_step, int64_t** out_rows, uint64_t* out_count);

/* ---------------------------------------------------------------------------
 * Streaming datasets: one or more streams (remote and/or local), shards
 * fetched into a node-wide cache shared by every process on the machine,
 * random access, and deterministic per-worker iteration with prefetching and
 * mid-epoch resumption, in mosaicml-streaming's order.
 *
 * A handle is used by one thread at a time (all functions, counters
 * included); the prefetch thread inside is the handle's own.
 * Views returned by sluice_stream_get and sluice_stream_next_batch point into
 * memory-mapped cached shards (or, for a large Parquet value that straddles
 * a snappy page's literals, into a buffer of the handle's that the next
 * call reuses) and stay valid until the next call of either
 * function, sluice_stream_iter_begin, sluice_stream_release or
 * sluice_stream_close on the same handle.
 * Fork safety: sluice_stream_open reads the index files only; the cache
 * state, the prefetch thread and store connections are created in the
 * process that reads, so a handle opened before fork() may be used in each
 * child (DataLoader workers); every child must call sluice_stream_iter_begin
 * itself. */

typedef struct sluice_stream sluice_stream;

/* Opens a streaming dataset from a JSON object with Mosaic's argument names
 * and defaults:
 *   {"streams": [{"remote": URL or path (optional), "local": folder,
 *                 "split": name, "proportion" | "repeat" | "choose": n,
 *                 "download_retry": 2, "download_timeout": 60,
 *                 "read_timeout": 30 (seconds of server silence before a
 *                                     request is retried),
 *                 "validate_hash": null | "sha1" | "xxh64" | ...,
 *                 "keep_zip": false,
 *                 "single_pass": false (true: shards received into memory,
 *                                       nothing written under "local";
 *                                       docs/configuration.rst),
 *                 "files": null | true | {"glob": "*.jpg" | [...],
 *                                         "manifest": "files.txt"}}, ...],
 *    "epoch_size", "predownload", "cache_limit" (bytes or "100gb"),
 *    "sampling_method", "sampling_granularity", "partition_algo",
 *    "num_canonical_nodes", "batch_size", "shuffle", "shuffle_algo",
 *    "shuffle_seed", "shuffle_block_size", "batching_method",
 *    "replication", "allow_unsafe_types", "wait_timeout" (seconds, 120),
 *    "custom_encodings" (the caller's own MDS encodings, as the names of
 *    sluice_dataset_open_with_encodings: their fields are handed out as
 *    stored), "any_custom_encoding" (as SLUICE_OPEN_ANY_CUSTOM_ENCODING),
 *    "mosaic_cache_limit_checks" (true: cache_limit also passes Mosaic's
 *    checks, with its ValueError texts: above the index.json files
 *    together, at least four times the largest shard; without it a limit
 *    need only hold what one reader needs at once),
 *    "prefetch_next_epoch" (true: open the next epoch's first shards
 *    near the end of an epoch), "peek_first_sample" (true: a pass's
 *    first sample, from an uncompressed MDS shard not in the cache, may be
 *    read with one or two ranged requests before its shard downloads,
 *    the shard's download starting once they are done or after 50 ms; false:
 *    it waits for the shard), "guess_first_shard" (true: reads a
 *    cold unshuffled stream's first shard head, shard.00000.mds, beside
 *    its index.json, so that an in-order first sample costs one round
 *    trip; processes forked from the opener take those bytes too; a
 *    cold Parquet folder's first file's head, its first two parts from
 *    byte 4, beside its footers, at most 16 MiB, for row group 0; forked
 *    processes take those bytes too), "pass_window_ids" (1048576: a pass whose
 *    worker plan has more ids is planned and read that many ids at a
 *    time, holding a few windows rather than the epoch's plan),
 *    "skip_corrupt_shards" (false),
 *    "skip_missing_files" (false: a raw-file stream's missing or unreadable
 *    file ends the iteration with an error naming it; true: it is skipped
 *    and counted in sluice_stream_stats), "fetch_concurrency" (shards or
 *    files one reader opens at once: default for raw-file streams 16, or
 *    64 shared by the node's readers when fewer, at least 2; 2 in order
 *    when every stream that downloads is a single pass; 4 otherwise; under a cache_limit 1 unless the node has one reader, and extra ones
 *    only when there is room), "metrics_retention_s" (an integer >= 0:
 *    seconds the node's metrics records of ended processes are kept;
 *    default $SLUICE_METRICS_RETENTION_S, else 86400),
 *    "world": {"rank", "world_size", "local_rank", "local_world_size"},
 *    "mixture": [[samples seen, [weight per stream, ...]], ...] (Sluice's
 *    extension: from each point on, the streams are drawn in proportion to
 *    its weights; the first point at 0, points increasing; needs
 *    "epoch_size", random batching and no stream weights; each stream is
 *    read in its shuffled order, pass after pass, in one global sequence
 *    for any world; engine/planner/README.md), "mixture_interpolation"
 *    ("step", the default: weights held until the next point; "linear":
 *    moved linearly to the next point's)}
 * Without "streams", top-level "remote"/"local"/"split" make one stream.
 * A stream with "files" is a raw-file stream: its files (listed under the
 * remote, or the local folder read in place, or named one per line by the
 * manifest: a path or {"path", "size"}) are its samples, one column "data"
 * (bytes) each; names starting with '_' or '.' are left out, globs select
 * by name ("*.jpg") or by path ("train/" then a name pattern), and the order is the paths
 * sorted bytewise. The listing is kept per node in <local>/<split>/.sluice/
 * so later runs do not list again.
 * The world defaults to torchrun's RANK, WORLD_SIZE, LOCAL_RANK and
 * LOCAL_WORLD_SIZE by sluice_world_from_env's rule (Mosaic's: one rank
 * per node without LOCAL_WORLD_SIZE), else one process. A remote's
 * index.json is downloaded once per node into <local>/<split>/; a stream
 * without a remote is read in place (nothing is written into its folder
 * unless a shard stored only compressed must be decompressed there, as
 * Mosaic does), and without its
 * index.json is SLUICE_ENOTFOUND with Mosaic's text ("RuntimeError: No
 * `remote` provided, ..."). An MDS encoding that is neither built in nor
 * the caller's own is SLUICE_EUNIMPLEMENTED, as for sluice_dataset_open.
 * Bad options: SLUICE_EINVAL naming the key (planner errors start with
 * Mosaic's error type). */
sluice_status sluice_stream_open(const char* config_json, sluice_stream** out);
void sluice_stream_close(sluice_stream* s);

/* Samples of all streams (the range of global sample ids). */
uint64_t sluice_stream_num_samples(const sluice_stream* s);
/* Samples this rank reads per epoch: ceil(epoch_size / world_size), as
 * Mosaic's len(dataset). */
uint64_t sluice_stream_len(const sluice_stream* s);

/* The dataset's streams and shards (all streams' shards, numbered stream by
 * stream as Mosaic does). 0 for a NULL handle. */
uint32_t sluice_stream_num_streams(const sluice_stream* s);
uint64_t sluice_stream_num_shards(const sluice_stream* s);

/* Global shard `shard`'s sample count and the stream that holds it.
 * SLUICE_ERANGE when shard >= sluice_stream_num_shards. */
sluice_status sluice_stream_shard_info(const sluice_stream* s, uint64_t shard, uint64_t* samples,
                                       uint32_t* stream);
/* Every global shard's sample count and stream in one call (what
 * sluice_stream_shard_info says of each): samples[g] and streams[g] for
 * g < sluice_stream_num_shards, in caller arrays with room for `count`
 * entries. SLUICE_ERANGE (nothing written) when count is less than
 * sluice_stream_num_shards; the arrays may be NULL when there are no
 * shards. */
sluice_status sluice_stream_shard_table(const sluice_stream* s, uint64_t* samples,
                                        uint32_t* streams, uint64_t count);
/* Global shard `shard`'s index.json entry as a JSON object, as
 * sluice_index_shards writes each entry (json.dumps(entry, sort_keys=True)
 * of the keys of its format), from the index the handle opened (nothing is
 * read). A shard that no index.json describes (a raw-file stream's file, a
 * Parquet row group) is {"samples": n}. Caller frees *out_json with
 * sluice_free; *json_size (may be NULL) is its length. SLUICE_ERANGE when
 * shard >= sluice_stream_num_shards. */
sluice_status sluice_stream_shard_entry(const sluice_stream* s, uint64_t shard, char** out_json,
                                        uint64_t* json_size);
/* Where global sample `sample` (an id of next_batch, next_ids or the
 * planner) comes from: its global shard (sluice_stream_shard_info says
 * the stream) and its index in that shard. Either out pointer may be NULL.
 * SLUICE_ERANGE past the last sample. */
sluice_status sluice_stream_sample_origin(const sluice_stream* s, uint64_t sample, uint64_t* shard,
                                          uint64_t* index_in_shard);

/* The local path of the file that holds global sample `sample` on this
 * node: for a raw-file stream the file itself (cached, or read in place),
 * else its shard's data file. The file is present while the sample is held
 * (until the next call that fetches, or sluice_stream_release); with a
 * cache_limit it may be evicted after. Caller frees *out_path with
 * sluice_free. SLUICE_ERANGE past the last sample; SLUICE_EINVAL for a
 * sample of a single_pass stream with a remote (its files are only in
 * memory: read the sample's bytes). */
sluice_status sluice_stream_sample_path(const sluice_stream* s, uint64_t sample, char** out_path);
/* The shards' format, which says what each field view holds: "mds" (the
 * column encoding's stored bytes, as sluice_decode_* take them), "json" (the
 * value's JSON text, a string with its quotes), "csv" / "tsv" / "xsv" (the
 * cell's text), "raw" (a file's bytes). Streams of different formats may
 * mix in one dataset, as in Mosaic's (the shards of one stream may not):
 * then this is "mixed", and sluice_stream_stream_format says each stream's,
 * the stream of a sample being the one whose shards hold it
 * (sluice_stream_shard_info). NULL for a NULL handle; valid until
 * sluice_stream_close. */
const char* sluice_stream_format(const sluice_stream* s);

/* The dataset's columns; strings owned by the handle. Streams may have
 * different columns, as in Mosaic's datasets (each sample has its own
 * shard's): the dataset's columns are every stream's names, first seen
 * first (stream 0's in its order, then the names later streams add). A
 * sample's fields are laid out by them; the field of a column its stream
 * lacks is {NULL, 0} (sluice_stream_stream_column_encoding says which
 * columns a stream has). A column's encoding is "mixed" where the streams
 * with shards differ in it or some lack it. */
uint32_t sluice_stream_num_columns(const sluice_stream* s);
const char* sluice_stream_column_name(const sluice_stream* s, uint32_t column);
const char* sluice_stream_column_encoding(const sluice_stream* s, uint32_t column);

/* Stream `stream`'s format and the encoding of dataset column `column` in
 * it (never "mixed"; "" for a column the stream lacks, and for every column
 * of a stream without shards). NULL for a NULL handle or an index out of
 * range; owned by the handle, valid until sluice_stream_close. */
const char* sluice_stream_stream_format(const sluice_stream* s, uint32_t stream);
const char* sluice_stream_stream_column_encoding(const sluice_stream* s, uint32_t stream,
                                                 uint32_t column);
/* Stream `stream`'s own columns in its shards' order (the order of the
 * keys of Mosaic's sample dicts): how many (0 for a stream without shards,
 * a NULL handle or a stream out of range), and the dataset column of its
 * k-th (UINT32_MAX when k or stream is out of range). */
uint32_t sluice_stream_stream_num_columns(const sluice_stream* s, uint32_t stream);
uint32_t sluice_stream_stream_column(const sluice_stream* s, uint32_t stream, uint32_t k);

/* Random access: fills fields[0..num_fields) (num_fields must equal
 * sluice_stream_num_columns) with views of global sample `sample`,
 * fetching its shard into the cache if needed. */
sluice_status sluice_stream_get(sluice_stream* s, uint64_t sample, sluice_bytes* fields,
                                uint32_t num_fields);

/* Deletes global shard `shard`'s files from this node's cache now (its data
 * and meta files, and kept zips), as Mosaic's evict_shard; a later read
 * fetches them again. When the last sluice_stream_get read this shard, its
 * views are dropped first. Evicting a shard that is not cached is
 * SLUICE_OK. SLUICE_ERANGE past the last shard; SLUICE_EINVAL for a stream
 * read in place (no remote: its files are the dataset) or a shard some
 * process is reading, this one's current iteration included (a shard of
 * the last sluice_stream_next_batch stays pinned until the next call). */
sluice_status sluice_stream_evict_shard(sluice_stream* s, uint64_t shard);

/* The warning Mosaic gives while it plans an epoch's shuffle, word for
 * word, for the iteration the last successful sluice_stream_iter_begin
 * started (its plan says it: nothing is planned again), or *out_text = NULL
 * when it gives none or no iteration was started: py1e warns when some
 * shard's random block comes out smaller than the shard (that shard is then
 * not shuffled with others). A binding shows it where Mosaic would (Python:
 * warnings.warn when an epoch's iteration starts). Random batching only.
 * Caller frees *out_text with sluice_free. Not to be called concurrently
 * with sluice_stream_iter_begin on the same stream. */
sluice_status sluice_stream_shuffle_warning(const sluice_stream* s, char** out_text);

/* Starts iterating the samples that data-loader worker `worker_id` of
 * `num_workers` of this rank reads in `epoch`, skipping the first
 * `sample_in_epoch` samples of the epoch counted over all ranks
 * (resumption; 0 = from the start). */
sluice_status sluice_stream_iter_begin(sluice_stream* s, uint64_t epoch, uint64_t sample_in_epoch,
                                       uint32_t worker_id, uint32_t num_workers);

/* The next up to `max_samples` samples: ids[k] is the global sample id and
 * fields[k * num_columns + c] the view of column c of sample k, for
 * k < *count. ids has room for max_samples, fields for max_samples *
 * num_columns. *count == 0 only when the epoch is done for this worker; a
 * call may return fewer than max_samples before that: it waits for its
 * first sample only and then takes the samples whose shards are open
 * already (never more than the `predownload` window). */
sluice_status sluice_stream_next_batch(sluice_stream* s, uint32_t max_samples, int64_t* ids,
                                       sluice_bytes* fields, uint32_t* count);

/* sluice_stream_next_batch's ids without its samples: the same ids in the
 * same calls' sizes, the same waits and prefetching, but no sample is read.
 * For a binding that reads each id itself with sluice_stream_get (a
 * subclass with its own __getitem__): the samples are counted in the
 * metrics as delivered by those gets, once; a call here counts a batch.
 * Ends the views of the last next_batch (there is no batch for
 * sluice_stream_batch_column afterwards). */
sluice_status sluice_stream_next_ids(sluice_stream* s, uint32_t max_samples, int64_t* ids,
                                     uint32_t* count);

/* Copies column `column` of the samples of the last sluice_stream_next_batch
 * call into one caller buffer, so that a binding crosses the ABI once per
 * batch and column instead of once per sample:
 *  - item_size > 0 (a fixed-size column, e.g. MDS "int", "float32",
 *    "ndarray:uint8:16,16"): field k is written at out + k * item_size;
 *    offsets may be NULL. A field of another size is SLUICE_EINVAL naming
 *    the column, the sample's shard and index, and both sizes.
 *  - item_size == 0: the fields are packed back to back; offsets (room for
 *    count + 1, count being next_batch's *count) gets offsets[0] = 0 and
 *    field k = out[offsets[k], offsets[k + 1]).
 * Every sample of the batch must have the column: one whose stream lacks
 * it is SLUICE_EINVAL naming the column, the stream and the sample.
 * The bytes are the field views' (see sluice_stream_format). *needed is set
 * to the bytes the column takes; when capacity is less, nothing is written
 * and the status is SLUICE_ERANGE: the batch stays, call again with a larger
 * buffer (out may be NULL when *needed is 0). After sluice_stream_get,
 * sluice_stream_iter_begin, sluice_stream_release,
 * sluice_stream_load_state, or a failed next_batch, there is no batch and
 * *needed is 0. The copies are the caller's, valid after the views end.
 * Same thread rule as the handle's other calls; `column` >= the number of
 * columns is SLUICE_ERANGE. */
sluice_status sluice_stream_batch_column(const sluice_stream* s, uint32_t column,
                                         uint64_t item_size, uint8_t* out, uint64_t capacity,
                                         uint64_t* offsets, uint64_t* needed);

/* For a caller that copies every field of a batch anyway (Python's
 * iteration and batch mode), as sluice_dataset_get_pieces is for a
 * dataset: off by default; after sluice_stream_read_pieces(s, 1),
 * sluice_stream_next_batch hands out a large Parquet value that straddles
 * the pieces of a snappy page (an image of 32 KiB or more in a page of
 * incompressible bytes) as its pieces instead of copying it into the
 * engine's memory: its view in `fields` has the value's size and a data
 * pointer (non-NULL) that must NOT be read. sluice_stream_batch_column
 * copies such a value from its pieces (its only copy); so does
 * sluice_stream_copy_pieced, for the i-th of them (i <
 * sluice_stream_num_pieced, in batch order): into dst[0..size), size being
 * its view's, setting *sample (k within the batch) and *column; with dst
 * NULL and capacity 0 it only sets those. SLUICE_ERANGE for i past them;
 * SLUICE_EINVAL when capacity is smaller than the value (nothing written).
 * Most batches have none (sluice_stream_num_pieced is 0: nothing more to
 * ask), and so has every call that ends the batch's views (they end
 * together). sluice_stream_get is not affected. Same thread rule as the
 * handle's other calls. */
sluice_status sluice_stream_read_pieces(sluice_stream* s, int on);
uint32_t sluice_stream_num_pieced(const sluice_stream* s);
sluice_status sluice_stream_copy_pieced(const sluice_stream* s, uint32_t i, uint32_t* sample,
                                        uint32_t* column, void* dst, uint64_t capacity);

/* Null elements of Parquet packed lists, as for sluice_dataset_get_masked:
 * off by default (a sample holding one fails with SLUICE_EUNIMPLEMENTED
 * naming the file, row group, column and row); after
 * sluice_stream_read_masks(s, 1), sluice_stream_get and
 * sluice_stream_next_batch read it (zero bytes where an element is null,
 * in the fields and in sluice_stream_batch_column's copies) and
 * sluice_stream_masked gives the last such call's fields that hold a null
 * element: the sample k within the call (0 for a get), the column and the
 * validity (one byte per element, 0 = null; a view valid as the fields').
 * sluice_stream_num_masked counts them (0 for most batches, and after any
 * call that ends the views); sluice_stream_masked: SLUICE_ERANGE for
 * i >= that count. Same thread rule as the handle's other calls. */
sluice_status sluice_stream_read_masks(sluice_stream* s, int on);
uint32_t sluice_stream_num_masked(const sluice_stream* s);
sluice_status sluice_stream_masked(const sluice_stream* s, uint32_t i, uint32_t* sample,
                                   uint32_t* column, sluice_bytes* validity);

/* Drops the views of the last get/next_batch call. The shard of a get is
 * unpinned at once; those of next_batch stay open in the prefetcher until the
 * next next_batch call moves past them. */
void sluice_stream_release(sluice_stream* s);

/* Mosaic's state_dict as JSON: {"epoch", "sample_in_epoch",
 * "num_canonical_nodes", "shuffle_seed", "initial_physical_nodes"}, where
 * sample_in_epoch = the position reached from the iteration's starting
 * offset after rank_samples * world_size samples (world size after
 * replication; skipped steps passed over, see
 * sluice_stream_load_state_with), rank_samples being how many samples this
 * rank consumed since sluice_stream_iter_begin (all its workers). Then
 * "sluice_order": the record of what else defines the order (streams and
 * their index fingerprints, sampling options, worlds, skipped steps; see
 * docs/resumption.rst). Caller frees with sluice_free. */
sluice_status sluice_stream_state_json(const sluice_stream* s, uint64_t rank_samples, char** out_json);

/* Mosaic's load_state_dict: takes the state's num_canonical_nodes,
 * shuffle_seed and initial_physical_nodes, and returns the epoch and
 * sample_in_epoch to pass to sluice_stream_iter_begin (either pointer may be
 * NULL). Resuming yields exactly the rest of the interrupted order. Ends
 * any iteration in progress on the handle. A state with a "sluice_order"
 * saved over other data or options than the handle's is SLUICE_EINVAL
 * naming each difference (saved and current values); a world of another
 * shape is accepted (Mosaic's elastic resume). The same as
 * sluice_stream_load_state_with(s, state_json, "{\"adapt\": [\"world\"]}", ...). */
sluice_status sluice_stream_load_state(sluice_stream* s, const char* state_json, uint64_t* epoch,
                                       uint64_t* sample_in_epoch);

/* sluice_stream_load_state with options (JSON, NULL = {}), every key optional:
 *  - "adapt": the parts of the state's "sluice_order" allowed to differ:
 *    "world" (another number of nodes or ranks per node), "streams" (other
 *    data or stream options), "sampling" (other planning options),
 *    "schedule" (another "mixture" schedule: it takes over at the state's
 *    sample_in_epoch, the samples before kept and each stream continuing
 *    its pass; "sampling" takes a new schedule the same way; the states
 *    saved later record the replaced schedule; docs/resumption.rst). Any
 *    other difference is SLUICE_EINVAL: "resume state does not match this
 *    dataset: <part> <what> changed: saved <old>, now <new>; ... (to
 *    resume anyway, adapt "<part>", ...)"; nothing is loaded then.
 *  - "skip_steps": [[first, last], ...]: half-open ranges of steps of the
 *    state's epoch to skip. Step k is every rank's k-th batch of the epoch:
 *    global positions [k G, (k+1) G), G = batch_size x world size (after
 *    replication). Their samples never come; every other step keeps its
 *    samples and order, on every rank, so ranks stay in lockstep.
 *  - "skip_samples": [[first, last], ...]: the same as global positions
 *    (sample_in_epoch's unit), each bound a multiple of G.
 *  - "skip_sample_ids": [id, ...]: the steps that hold these global sample
 *    ids after the state's position, on this world (every rank's order of
 *    the epoch is planned once to find them). An id no rank reads there is
 *    SLUICE_EINVAL: "skip_sample_ids: sample <id> is not read in epoch <E>
 *    after sample_in_epoch <S> ...".
 *  - "steps_of": {"batch_size": B, "ranks": R}: the state's skip ranges
 *    are steps of that world (B x R samples), not of this one: for an
 *    elastic packed resume (sluice_pack_begin_segments plans the shape the
 *    epoch started on, whose steps they are). No skip may be added with it
 *    (SLUICE_EINVAL).
 * The skip ranges still ahead, and the state's sample_in_epoch, must be
 * whole steps (SLUICE_EINVAL otherwise). They are kept in the states the
 * handle saves, so a later resume skips them too. A state without
 * "sluice_order" (Mosaic's, an older Sluice's) loads as Mosaic's. */
sluice_status sluice_stream_load_state_with(sluice_stream* s, const char* state_json,
                                            const char* options_json, uint64_t* epoch,
                                            uint64_t* sample_in_epoch);

/* For bindings that count consumed samples themselves: `state_json` holds
 * Mosaic's five keys; *out_json gets them back (same values, Mosaic's key
 * order) followed by the handle's "sluice_order" for that state's epoch,
 * shuffle_seed and num_canonical_nodes. Any "sluice_order" given is
 * replaced. Caller frees with sluice_free. */
sluice_status sluice_stream_state_with_order(const sluice_stream* s, const char* state_json,
                                             char** out_json);

/* The rule a resume from a state draws its mixture schedule by (the
 * engine adopts it, as it adopts the seed): `sampling_json` is that state's
 * "sluice_order" "parts" "sampling" object. *out_rule gets "tijdeman" or
 * "deficit", static strings the caller must not free: the recorded
 * "mixture_rule", or "deficit" for a schedule recorded without one (saved
 * before Tijdeman's rule, or drawn by "deficit", which records none); NULL
 * when the part has no "mixture". SLUICE_EINVAL for text that is not a
 * JSON object, or another rule name ("'parts.sampling.mixture_rule' must
 * be ..."). Thread-safe. */
sluice_status sluice_recorded_mixture_rule(const char* sampling_json, const char** out_rule);

/* The sample_in_epoch to save when the job consumed `consumed` samples (all
 * ranks, after replication) of `epoch` from position `start`: start +
 * consumed, plus the skipped steps it passed over (also a range it reached
 * exactly). Each argument at most 2^48. */
sluice_status sluice_stream_position_after(const sluice_stream* s, uint64_t epoch, uint64_t start,
                                           uint64_t consumed, uint64_t* position);

/* What this process did through this handle. */
typedef struct sluice_stream_stats {
  uint64_t bytes_downloaded;   /* stored bytes copied from remotes */
  uint64_t shards_downloaded;  /* shard files fetched into the cache */
  uint64_t shards_evicted;     /* shard files deleted to stay under cache_limit */
  uint64_t cache_hits;         /* shard files found already in the cache */
  uint64_t consumer_wait_ns;   /* time get/next_batch waited for shards */
  uint64_t shards_skipped;     /* shards left out as corrupt (skip_corrupt_shards) */
  uint64_t samples_skipped;    /* their samples the iteration passed over */
} sluice_stream_stats;
sluice_status sluice_stream_counters(const sluice_stream* s, sluice_stream_stats* out);

/* Every counter of this process's use of the handle as one JSON object
 * (each field documented in docs/metrics.rst): "remote" (the first stream's
 * remote), "totals" (since the handle was opened, or since a forked child
 * first read), "window" (the same counts since the previous call of this
 * function on the handle, with rates), "hosts" (per store host: requests,
 * retries, throttling, errors by kind, time to first byte and transfer
 * time p50/p95/p99; process-wide) and "diagnosis" (one sentence naming what
 * held the consumer back in the window). Each call moves the window on.
 * Counting is always on (a few relaxed stores per batch). Caller frees
 * *out_json with sluice_free. Same thread rule as every handle function. */
sluice_status sluice_stream_metrics_json(sluice_stream* s, char** out_json);

/* The handle's totals (as "totals" and "hosts" of sluice_stream_metrics_json;
 * the window is left alone) in Prometheus' text exposition format 0.0.4,
 * every series labelled process="<process>" (e.g. the pid: one file per
 * process, summed by a query). Metric names are listed in
 * docs/metrics.rst. Caller frees *out_text with sluice_free. */
sluice_status sluice_stream_metrics_prometheus(const sluice_stream* s, const char* process,
                                               char** out_text);

/* As sluice_stream_metrics_json, summed over `scope`: "process" (the same
 * as sluice_stream_metrics_json), "job" (this handle in this process and in
 * the processes forked from it, e.g. DataLoader workers) or "node" (every
 * process of the node that read through the first stream's cache folder,
 * ended ones included). Each process keeps a small record of its counts in
 * the node's state folder of that cache folder (written at most once a
 * second by next_batch, when a pass ends, when the handle is closed, and by
 * sluice_stream_publish_metrics); "job" and "node" first write this
 * process's, then sum the records: counts added, "processes" the records
 * summed, "hosts" merged by name (percentiles of the merged histograms),
 * the prefetch lead the running processes' leads added and its min the
 * least, the cache gauges this process's (docs/metrics.rst). The records of
 * ended processes older than the options' "metrics_retention_s" (seconds),
 * else $SLUICE_METRICS_RETENTION_S (default 24 h), are deleted. Each scope has its own window. Errors: an unknown scope or
 * a bad SLUICE_METRICS_RETENTION_S (SLUICE_EINVAL), the record folder
 * (SLUICE_EIO, its path named).
 * Caller frees *out_json with sluice_free. */
sluice_status sluice_stream_metrics_json_scope(sluice_stream* s, const char* scope,
                                               char** out_json);

/* sluice_stream_metrics_prometheus of `scope`'s totals (as
 * sluice_stream_metrics_json_scope; "node" for one file of a node's totals,
 * e.g. with process="node"). Caller frees *out_text with sluice_free. */
sluice_status sluice_stream_metrics_prometheus_scope(sluice_stream* s, const char* scope,
                                                     const char* process, char** out_text);

/* Writes this process's record of the handle's counts to the node's folder
 * now (see sluice_stream_metrics_json_scope), e.g. before a process exits
 * without closing the handle. */
sluice_status sluice_stream_publish_metrics(sluice_stream* s);

/* ---------------------------------------------------------------------------
 * Token packing (engine/packing): fixed-length rows of token ids from one
 * column of a sluice_stream's samples, in the order the stream plans for a
 * worker. Documents are joined with eos_id and cut into rows ("concat"), or
 * packed by first-fit decreasing within windows of documents ("bin", with
 * segment ids and position ids so that a trainer can mask attention across
 * documents). The token column: MDS ndarray of integers or bytes of
 * little-endian integers, JSONL arrays of integers, Parquet list<int..>.
 * A sluice_pack reads through its stream: the stream must outlive it, and
 * the stream's own iteration and batch end when the pack iterates. Same
 * thread rule as the stream (one thread at a time for both). */

typedef struct sluice_pack sluice_pack;

/* A packer over `s` from a JSON spec: {"column": name, "seq_len": n
 * (1..2^24), "eos_id": id or null, "method": "concat" (default) | "bin",
 * "pad_id": id or null (default eos_id, else 0), "bin_window": documents
 * per bin-packing window (256), "bytes_dtype": the ints of an MDS bytes
 * column ("int64"), "drop_last": concat drops the epoch's last partial row
 * (true) or hands it out padded}. SLUICE_EINVAL naming the key, or the
 * column and stream whose values are no token ids. Free with
 * sluice_pack_close. */
sluice_status sluice_pack_open(sluice_stream* s, const char* spec_json, sluice_pack** out);
void sluice_pack_close(sluice_pack* p);
/* The spec's seq_len: each row's tokens. */
uint64_t sluice_pack_seq_len(const sluice_pack* p);

/* The resume rule: where DataLoader worker `worker` of `num_workers`
 * resumes when its rank consumed `rank_rows` rows in batches of
 * `batch_size` (a DataLoader deals batch i to worker i % num_workers and
 * starts again from worker 0 when made anew): *out_role is the worker of
 * the saved run whose rows it continues ((worker + rank_rows / batch_size)
 * % num_workers: pass it as sluice_pack_begin's worker) and *out_rows the
 * rows that worker handed out (its skip_rows). Exact while every worker
 * still has rows. SLUICE_EINVAL for batch_size 0 or worker >= num_workers. */
sluice_status sluice_pack_resume_point(uint64_t rank_rows, uint64_t batch_size, uint32_t worker,
                                       uint32_t num_workers, uint32_t* out_role,
                                       uint64_t* out_rows);

/* sluice_pack_resume_point exact in an epoch's tail too, after a worker ran
 * out (the DataLoader then deals each round to the workers that still have
 * batches, in worker order): counts the rows of every worker of `epoch` by
 * packing them (up to what sluice_pack_resume_point gives each; all of
 * them when one has fewer). Ends any pass of `p` in progress: call
 * sluice_pack_begin after. SLUICE_EINVAL as sluice_pack_resume_point. */
sluice_status sluice_pack_resume_point_in(sluice_pack* p, uint64_t epoch, uint64_t rank_rows,
                                          uint64_t batch_size, uint32_t worker,
                                          uint32_t num_workers, uint32_t* out_role,
                                          uint64_t* out_rows);

/* Starts worker `worker` of `num_workers`' rows of `epoch` (its samples
 * from the epoch's start, as sluice_stream_iter_begin plans them) and skips
 * the first `skip_rows` rows (reading their samples, handing nothing out):
 * a resume is exact when skip_rows is the rows the worker handed out before
 * on the same world shape. */
sluice_status sluice_pack_begin(sluice_pack* p, uint64_t epoch, uint32_t worker,
                                uint32_t num_workers, uint64_t skip_rows);

/* An elastic resume (methods "concat" and "bin"): starts role `role`
 * (global rank x workers + the worker whose rows it continues) of the last
 * of the world shapes `segments_json` lists, then skips its first
 * `skip_rows` rows (sluice_pack_resume_point_segments gives both). The
 * list, oldest first: [{"nodes", "ranks_per_node", "workers", "batch_size",
 * "rows"}, ...], each a shape the epoch ran on and the rows the job (all
 * ranks) consumed on it; the last is this run's shape. A shape is a
 * planning world: under replication its ranks are the groups of replicas
 * (each replica of a group passes the group's role). Every token of the
 * epoch's plan (the steps the loaded state skips in the epoch left out as
 * the first shape skips them) that no consumed row holds is packed once
 * over the last shape's roles (docs/resumption.rst, "Elastic packed
 * resume"). Reads the documents the earlier shapes consumed (their token
 * counts) before the first row. SLUICE_EINVAL for a bad list, a role out
 * of the last shape, or skip ranges that are not whole steps of the first
 * shape. */
sluice_status sluice_pack_begin_segments(sluice_pack* p, uint64_t epoch,
                                         const char* segments_json, uint32_t role,
                                         uint64_t skip_rows);

/* Where DataLoader worker `worker` of global rank `rank` resumes on the
 * last of `segments_json`'s shapes (sluice_pack_begin_segments' list) after
 * the job consumed that segment's "rows" there: *out_role the role to pass
 * to sluice_pack_begin_segments (rank x workers + the worker whose rows it
 * continues) and *out_rows its skip_rows. Exact in the shape's epoch tail
 * too (as sluice_pack_resume_point_in: counts the rank's roles' rows by
 * their documents' sizes). Ends any pass of `p` in progress. SLUICE_EINVAL
 * for a bad list, or a rank or worker out of the last shape. */
sluice_status sluice_pack_resume_point_segments(sluice_pack* p, uint64_t epoch,
                                                const char* segments_json, uint32_t rank,
                                                uint32_t worker, uint32_t* out_role,
                                                uint64_t* out_rows);

/* Up to `max_rows` next rows: row k of the *count is tokens[k * seq_len ..
 * (k + 1) * seq_len); segment_ids and position_ids (each NULL or with room
 * for max_rows * seq_len) get, per token, its document piece's number in
 * the row (1, 2, ..; 0 for padding) and its place in that piece (0 for
 * padding). *count == 0 only when the epoch is done for this worker. */
sluice_status sluice_pack_next(sluice_pack* p, uint32_t max_rows, int64_t* tokens,
                               int32_t* segment_ids, int32_t* position_ids, uint32_t* count);

/* Document boundaries of `rows` rows that sluice_pack_next handed out, from
 * their segment_ids (rows x seq_len): per row, seq_len + 1 int32 in
 * `cu_seqlens` (room for rows x (seq_len + 1)), the layout of
 * flash-attention's varlen cu_seqlens: 0, the start of each document piece
 * in the row, then the end of the last piece (the first padding token, or
 * seq_len), that end repeated to the fixed length (zero-length sequences);
 * and in `num_documents` (NULL or room for `rows`) the row's pieces (0 for
 * a row of padding only). A batch flattened to rows x seq_len tokens:
 * row r's first num_documents[r] + 1 entries offset by r x seq_len, then
 * (r + 1) x seq_len when the row has padding (the padding a sequence of
 * its own, segment_ids 0), a boundary two rows share written once. Reads
 * and writes caller memory only. */
sluice_status sluice_pack_bounds(const sluice_pack* p, uint32_t rows, const int32_t* segment_ids,
                                 int32_t* cu_seqlens, int32_t* num_documents);

/* Since sluice_pack_begin: rows handed out (skipped ones included), the
 * last row's first token as (document, offset): the document's number
 * among this worker's samples of the epoch and the token's offset in its
 * tokens (eos counted); tokens read (eos included) and padding handed out.
 * Any pointer may be NULL. */
sluice_status sluice_pack_position(const sluice_pack* p, uint64_t* rows, uint64_t* document,
                                   uint64_t* offset, uint64_t* tokens_in, uint64_t* padding_out);

/* ---------------------------------------------------------------------------
 * Benchmarking: what `sluice bench` runs (bindings/cli/bench/README.md).
 *
 * Streams `epochs` epochs of a dataset through one cold (or given) cache
 * folder per simulated node, each (node, rank, worker) a forked process, and
 * measures throughput, time to first sample, per-batch stalls, downloads per
 * node, cache hits and evictions, CPU and peak RSS. `options_json` holds the
 * dataset's options under Mosaic's names ("remote" required; "local" and
 * "world" are the bench's) and the job's: "cache_dir", "nodes",
 * "ranks_per_node", "workers_per_rank", "epochs", "step_time" (s per batch)
 * or "consumer_rate" (samples/s per rank), "interval" (s between series
 * points), "plan_only" (true: predict from the planner, downloading only
 * index.json, with "link_bandwidth" in bytes/s per node). On success *out_json is the report (caller frees it with
 * sluice_free). Bad options: SLUICE_EINVAL naming the key. Blocks until the
 * run ends; forks, so call it where fork() is safe (no other thread holding
 * a lock the children need). Thread-safe otherwise. */
sluice_status sluice_bench_run(const char* options_json, char** out_json);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_H_ */
