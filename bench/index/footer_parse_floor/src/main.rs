//! Issue 38's reference Parquet reader: arrow-rs (the `parquet` crate)
//! listing a folder and decoding every file's footer, the analogue of
//! simdjson's parse of an index.json. Not built by meson nor run in CI.
//!
//!   cargo build --release --locked   (in this folder)
//!   target/release/footer_parse_floor FOLDER [THREADS=16] [MODE=tail]
//!
//! Lists FOLDER (readdir; the names ending in ".parquet", as the engine's
//! ParquetFileSelection, sorted bytewise), then on THREADS threads taking
//! files in order decodes each file's footer to arrow-rs's full
//! `ParquetMetaData` (schema, row groups, every column chunk's metadata;
//! no page indexes). MODE:
//! - reader: `ParquetMetaDataReader::parse_and_finish(&File)`, what an
//!   arrow-rs user writes (a read of the 8-byte tail, then the metadata);
//! - tail: one pread of the last 64 KiB into a thread's kept buffer (a
//!   second read only for a longer footer), `decode_metadata`;
//! - lean: tail, with statistics, encoding stats and size stats skipped and
//!   the first file's schema passed to every later decode (arrow-rs then
//!   skips the schema's bytes unchecked; so only for a folder of one
//!   schema, as the bench's fixtures): the least arrow-rs decodes.
//! Prints the files, row groups and rows (to check against the engine's
//! index) and each phase's wall seconds.
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use parquet::errors::ParquetError;
use parquet::file::metadata::{
    FooterTail, ParquetMetaData, ParquetMetaDataOptions, ParquetMetaDataReader,
    ParquetStatisticsPolicy,
};
use parquet::schema::types::SchemaDescriptor;

const TAIL: usize = 64 << 10;
const FOOTER: usize = 8;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Reader,
    Tail,
    Lean,
}

#[derive(Default)]
struct Counts {
    files: u64,
    row_groups: u64,
    rows: u64,
}

fn fail(path: &Path, e: impl std::fmt::Display) -> ! {
    eprintln!("{}: {}", path.display(), e);
    std::process::exit(1);
}

// The file's FileMetaData bytes: the tail read once into `buf` (kept
// between files), read again whole only when the footer is longer.
fn metadata_bytes<'a>(file: &File, size: u64, buf: &'a mut Vec<u8>) -> Result<&'a [u8], String> {
    if size < FOOTER as u64 {
        return Err(format!("{size} bytes, fewer than a footer's 8"));
    }
    let want = size.min(TAIL as u64) as usize;
    buf.resize(want, 0);
    file.read_exact_at(buf, size - want as u64).map_err(|e| e.to_string())?;
    let tail: &[u8; FOOTER] = buf[want - FOOTER..].try_into().unwrap();
    let len = FooterTail::try_new(tail).map_err(|e| e.to_string())?.metadata_length();
    if len as u64 + FOOTER as u64 > size {
        return Err(format!("a footer of {len} bytes in a file of {size}"));
    }
    if len + FOOTER > want {
        buf.resize(len + FOOTER, 0);
        file.read_exact_at(buf, size - (len + FOOTER) as u64).map_err(|e| e.to_string())?;
    }
    let end = buf.len() - FOOTER;
    Ok(&buf[end - len..end])
}

fn lean_options(schema: &Arc<SchemaDescriptor>) -> ParquetMetaDataOptions {
    ParquetMetaDataOptions::new()
        .with_schema(schema.clone())
        .with_encoding_stats_policy(ParquetStatisticsPolicy::SkipAll)
        .with_column_stats_policy(ParquetStatisticsPolicy::SkipAll)
        .with_size_stats_policy(ParquetStatisticsPolicy::SkipAll)
}

fn decode(
    mode: Mode,
    path: &Path,
    buf: &mut Vec<u8>,
    schema: &OnceLock<Arc<SchemaDescriptor>>,
) -> Result<ParquetMetaData, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    if mode == Mode::Reader {
        return ParquetMetaDataReader::new().parse_and_finish(&file).map_err(|e| e.to_string());
    }
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    let bytes = metadata_bytes(&file, size, buf)?;
    let meta = match (mode, schema.get()) {
        (Mode::Lean, Some(s)) => {
            ParquetMetaDataReader::decode_metadata_with_options(bytes, Some(&lean_options(s)))
        }
        _ => ParquetMetaDataReader::decode_metadata(bytes),
    }
    .map_err(|e: ParquetError| e.to_string())?;
    if mode == Mode::Lean {
        let _ = schema.set(meta.file_metadata().schema_descr_ptr());
    }
    Ok(meta)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: {} FOLDER [THREADS=16] [MODE=reader|tail|lean]", args[0]);
        std::process::exit(2);
    }
    let folder = PathBuf::from(&args[1]);
    let threads: usize = args.get(2).map_or(16, |t| t.parse().expect("THREADS: a number"));
    let mode = match args.get(3).map_or("tail", String::as_str) {
        "reader" => Mode::Reader,
        "tail" => Mode::Tail,
        "lean" => Mode::Lean,
        m => fail(&folder, format!("MODE {m}: reader, tail or lean")),
    };

    let start = Instant::now();
    let mut names: Vec<Vec<u8>> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| fail(&folder, e))
        .map(|e| e.unwrap_or_else(|e| fail(&folder, e)))
        .filter(|e| e.file_type().map_or(false, |t| t.is_file()))
        .map(|e| e.file_name().into_encoded_bytes())
        .filter(|n| n.ends_with(b".parquet") && !n.starts_with(b"_") && !n.starts_with(b"."))
        .collect();
    names.sort_unstable();
    let listed = start.elapsed().as_secs_f64();

    let next = AtomicUsize::new(0);
    let schema = OnceLock::new();
    let totals: Vec<Counts> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut buf = Vec::with_capacity(TAIL);
                    let mut c = Counts::default();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= names.len() {
                            break;
                        }
                        // SAFETY: the bytes came from OsString::into_encoded_bytes.
                        let name = unsafe { std::ffi::OsStr::from_encoded_bytes_unchecked(&names[i]) };
                        let path = folder.join(name);
                        let meta = decode(mode, &path, &mut buf, &schema)
                            .unwrap_or_else(|e| fail(&path, e));
                        c.files += 1;
                        c.row_groups += meta.num_row_groups() as u64;
                        c.rows += meta.row_groups().iter().map(|g| g.num_rows() as u64).sum::<u64>();
                    }
                    c
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a decoding thread panicked")).collect()
    });
    let whole = start.elapsed().as_secs_f64();
    let c = totals.iter().fold(Counts::default(), |a, b| Counts {
        files: a.files + b.files,
        row_groups: a.row_groups + b.row_groups,
        rows: a.rows + b.rows,
    });
    println!(
        "files {} row_groups {} rows {} threads {} list_s {:.3} footers_s {:.3} whole_s {:.3}",
        c.files,
        c.row_groups,
        c.rows,
        threads,
        listed,
        whole - listed,
        whole
    );
}
