//! [`LocalLog`]: an internal log kept in this process, for the standalone worker (no internal
//! topics). In memory it backs the config and status stores (Apache's `MemoryConfigBackingStore`
//! and `MemoryStatusBackingStore`); with a file it backs the offsets store (Apache's
//! `FileOffsetBackingStore`, `offset.storage.file.filename`).
//!
//! ```text
//!   send()/send_batch() ──(file: rewrite the whole file first)──▶ on_record, in order
//!   read_to_end(): nothing to wait for: a write has reached the store when it returns
//! ```
//!
//! The stores above it are the distributed worker's, unchanged: they see records with
//! increasing offsets in one partition, as from a topic.
//!
//! # Guarantees
//!
//! - File-backed: the file holds the latest value of every key (a compacted log), as a Java
//!   serialized `HashMap<byte[], byte[]>` ([`super::java_serial`]) that Apache's standalone
//!   worker reads, and it reads Apache's. Each write replaces the whole file atomically (a
//!   temporary file beside it, fsync, rename, fsync of the directory), so a worker killed at any
//!   moment leaves the previous or the new offsets, never a torn file. A write returns only once
//!   the file is durable, and only then do the records reach `on_record`.
//! - A tombstone removes its key from the file (Apache keeps the key with a null value; both
//!   read as "no offset").
//!
//! # Errors
//!
//! A file that cannot be read or is not a serialized `HashMap<byte[], byte[]>` fails start-up
//! naming the file ([`StorageError::Io`]): unlike Apache, which takes a truncated file for an
//! empty one, offsets are never silently reset. A file of zero bytes (`touch`) is read as
//! empty, with a warning. A failed write is an error and changes nothing.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::StorageError;
use super::java_serial;
use super::log_record::{ConsumedRecord, RawRecord, RecordCallback};

/// An internal log in this process; cheap to clone (clones share the log).
#[derive(Clone)]
pub struct LocalLog {
    name: String,
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for LocalLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalLog")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

struct Inner {
    on_record: RecordCallback,
    next_offset: i64,
    file: Option<OffsetsFile>,
}

/// The file a log persists to, and what it holds.
struct OffsetsFile {
    path: PathBuf,
    entries: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl LocalLog {
    /// A log that lives as long as the process (`name` for messages: "config", "status").
    pub fn in_memory(name: &str, on_record: RecordCallback) -> Self {
        LocalLog {
            name: name.to_owned(),
            inner: Arc::new(Mutex::new(Inner {
                on_record,
                next_offset: 0,
                file: None,
            })),
        }
    }

    /// A log persisted in `path`: its entries are replayed into `on_record` now (a missing
    /// file is an empty log, as in Apache); see the module docs for what is refused.
    pub fn with_file(path: &Path, mut on_record: RecordCallback) -> Result<Self, StorageError> {
        let entries = read_offsets_file(path)?;
        let mut next_offset = 0;
        for (key, value) in &entries {
            on_record(&ConsumedRecord {
                partition: 0,
                offset: next_offset,
                key: Some(key.clone()),
                value: Some(value.clone()),
            });
            next_offset += 1;
        }
        tracing::info!(file = %path.display(), offsets = entries.len(), "read the offsets file");
        Ok(LocalLog {
            name: path.display().to_string(),
            inner: Arc::new(Mutex::new(Inner {
                on_record,
                next_offset,
                file: Some(OffsetsFile {
                    path: path.to_owned(),
                    entries,
                }),
            })),
        })
    }

    /// What this log is: "config", "status", or the offsets file's path.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether writes go to a file (and so block on its fsync).
    pub fn is_file_backed(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .file
            .is_some()
    }

    /// Writes one record; returns its (partition, offset).
    pub fn send(&self, key: &[u8], value: Option<&[u8]>) -> Result<(i32, i64), StorageError> {
        let written = self.send_batch(&[(key.to_vec(), value.map(<[u8]>::to_vec))])?;
        Ok(written[0])
    }

    /// Writes records in order: persisted together (file-backed), then handed to `on_record`.
    pub fn send_batch(&self, records: &[RawRecord]) -> Result<Vec<(i32, i64)>, StorageError> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = &mut inner.file {
            let mut entries = file.entries.clone();
            for (key, value) in records {
                match value {
                    Some(v) => entries.insert(key.clone(), v.clone()),
                    None => entries.remove(key),
                };
            }
            write_offsets_file(&file.path, &entries)?;
            file.entries = entries;
        }
        let mut written = Vec::with_capacity(records.len());
        for (key, value) in records {
            let offset = inner.next_offset;
            inner.next_offset += 1;
            (inner.on_record)(&ConsumedRecord {
                partition: 0,
                offset,
                key: Some(key.clone()),
                value: value.clone(),
            });
            written.push((0, offset));
        }
        Ok(written)
    }
}

/// The entries of an offsets file in Apache's format; a missing file has none.
pub fn read_offsets_file(path: &Path) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, StorageError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            tracing::info!(file = %path.display(), "no offsets file yet; it is created at the first offset commit");
            return Ok(BTreeMap::new());
        }
        Err(e) => {
            return Err(StorageError::Io(format!(
                "failed to read offsets file {}: {e}",
                path.display()
            )));
        }
    };
    if bytes.is_empty() {
        tracing::warn!(file = %path.display(), "the offsets file is empty (0 bytes); starting without offsets");
        return Ok(BTreeMap::new());
    }
    let decoded = java_serial::decode_byte_map(&bytes).map_err(|e| {
        StorageError::Io(format!(
            "offsets file {} is not a serialized HashMap<byte[], byte[]> as Kafka Connect's standalone worker writes it: {e}; \
             move it away to start without offsets",
            path.display()
        ))
    })?;
    // Null keys are never looked up, null values are Apache's tombstones.
    Ok(decoded
        .into_iter()
        .filter_map(|(k, v)| Some((k?, v?)))
        .collect())
}

/// Replaces `path` with `entries`, atomically and durably (see the module docs).
fn write_offsets_file(
    path: &Path,
    entries: &BTreeMap<Vec<u8>, Vec<u8>>,
) -> Result<(), StorageError> {
    let fail = |what: &str, e: std::io::Error| {
        StorageError::Io(format!(
            "failed to write offsets file {}: {what}: {e}",
            path.display()
        ))
    };
    let list: Vec<java_serial::ByteMapEntry> = entries
        .iter()
        .map(|(k, v)| (Some(k.clone()), Some(v.clone())))
        .collect();
    let bytes = java_serial::encode_byte_map(&list);
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let mut f = std::fs::File::create(&tmp).map_err(|e| fail("create temporary file", e))?;
    f.write_all(&bytes)
        .map_err(|e| fail("write temporary file", e))?;
    f.sync_all().map_err(|e| fail("sync temporary file", e))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| fail("rename temporary file", e))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    if let Ok(d) = std::fs::File::open(&dir) {
        d.sync_all().map_err(|e| fail("sync directory", e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collector() -> (RecordCallback, Arc<Mutex<Vec<ConsumedRecord>>>) {
        let seen: Arc<Mutex<Vec<ConsumedRecord>>> = Arc::default();
        let s = seen.clone();
        let cb: RecordCallback =
            Box::new(move |r: &ConsumedRecord| s.lock().unwrap().push(r.clone()));
        (cb, seen)
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("local-log-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn memory_log_hands_records_over_in_order_with_offsets() {
        let (cb, seen) = collector();
        let log = LocalLog::in_memory("config", cb);
        assert_eq!(log.send(b"a", Some(b"1")).unwrap(), (0, 0));
        assert_eq!(
            log.send_batch(&[(b"b".to_vec(), None), (b"c".to_vec(), Some(b"3".to_vec()))])
                .unwrap(),
            vec![(0, 1), (0, 2)]
        );
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 3);
        assert_eq!(seen[1].value, None);
        assert_eq!(seen[2].offset, 2);
    }

    #[test]
    fn file_log_persists_the_latest_value_of_each_key() {
        let dir = temp_dir("persist");
        let path = dir.join("offsets");
        let (cb, _) = collector();
        let log = LocalLog::with_file(&path, cb).unwrap();
        log.send(b"k1", Some(b"v1")).unwrap();
        log.send(b"k2", Some(b"v2")).unwrap();
        log.send(b"k1", Some(b"v3")).unwrap();
        log.send(b"k2", None).unwrap();
        let (cb, seen) = collector();
        LocalLog::with_file(&path, cb).unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].key.as_deref(), Some(&b"k1"[..]));
        assert_eq!(seen[0].value.as_deref(), Some(&b"v3"[..]));
        assert!(!dir.join("offsets.tmp").exists());
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it_and_an_empty_one_is_empty() {
        let dir = temp_dir("corrupt");
        let path = dir.join("offsets");
        std::fs::write(&path, b"\xac\xed\x00\x05\x73").unwrap();
        let (cb, _) = collector();
        let err = LocalLog::with_file(&path, cb).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("end of file"), "{err}");
        std::fs::write(&path, b"").unwrap();
        let (cb, seen) = collector();
        LocalLog::with_file(&path, cb).unwrap();
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn apaches_null_values_read_as_no_offset() {
        let dir = temp_dir("nulls");
        let path = dir.join("offsets");
        std::fs::write(
            &path,
            java_serial::encode_byte_map(&[
                (Some(b"k1".to_vec()), None),
                (Some(b"k2".to_vec()), Some(b"v".to_vec())),
            ]),
        )
        .unwrap();
        let (cb, seen) = collector();
        LocalLog::with_file(&path, cb).unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].key.as_deref(), Some(&b"k2"[..]));
    }
}
