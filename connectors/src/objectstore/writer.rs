//! The files of one topic-partition: which file a record goes to, when files end, and their
//! uploads (Confluent's `TopicPartitionWriter`, with the same rotation rules).
//!
//! ```text
//!  record ─▶ partitioner ─▶ encoded partition ─▶ open files of that encoded partition
//!     (the value's, and with store.kafka.keys / store.kafka.headers the key's and headers';
//!      a tombstone under behavior.on.null.values=write: tombstone.encoded.partition, no value)
//!     before writing: end every open file if the record's time is rotate.interval.ms past the
//!       first record's, or (rotate.file.on.partition.change) its encoded partition changed,
//!       or the wall-clock schedule (rotate.schedule.interval.ms) is due, or its value schema
//!       differs from the one its file started with (schema.compatibility=NONE), or it
//!       would open one file more than partitioner.max.open.files
//!     after writing: end every open file once flush.size records were written since the last
//!       end; while a file grows, every s3.part.size bytes go out as a multipart-upload part
//!  ending the files: finish each (last block, footer), complete its multipart upload or PUT
//!    it whole, then the partition's committable offset becomes the last written offset + 1
//! ```
//!
//! # Guarantees
//!
//! - Files end only where the records alone decide (a count, record times, schemas, encoded
//!   partitions) unless a wall clock is configured, and the consumer resumes at the offset after
//!   the last ended files. A replay therefore rewrites byte-identical files under identical
//!   names; the store holds each record once.
//! - An object appears whole or not at all: a single PUT, or a multipart upload that only
//!   becomes visible when completed.
//! - A failed PUT keeps the finished file in memory: the runner redelivers the batch and the
//!   upload is tried again before any new record. A failed multipart part cannot be retried
//!   (the upload would miss a part), so the partition's open files are dropped, their uploads
//!   aborted, and the consumer rewound to the first offset after the last ended files; the
//!   rewritten files are the same.
//! - Memory per partition: per open file, under `s3.part.size` of encoded bytes, plus a format's
//!   own buffer (an Avro block of 64 000 bytes; a Parquet row group of `s3.part.size`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use connect_api::data::{Schema, Value};
use connect_api::error::{ConnectError, ErrorKind, Result};
use connect_api::record::{SinkRecord, TopicPartition};
use object_store::path::Path;
use object_store::{MultipartUpload, ObjectStore, ObjectStoreExt, PutPayload};

use super::format::{Format, RecordWriter};
use super::joda::Zone;
use super::partitioner::{Partitioner, SchemaAffix, TimestampExtractor};
use super::tagging::{FileTags, Tagging};
use super::views::View;

/// What the task does with a record whose value is null (`behavior.on.null.values`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NullValues {
    /// The task fails.
    Fail,
    /// The record is skipped (and reported to the dead letter queue if `report`).
    Ignore { report: bool },
    /// Written as the format writes a null (this sink's own `jsonl`: a `null` line).
    Write,
    /// Confluent's `write`: the record goes to this encoded partition (`tombstone.encoded.partition`),
    /// where only its key (and headers) files are written.
    Tombstones { partition: String },
}

/// When open files end besides `flush.size`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rotation {
    None,
    /// This sink's own `rotate.interval.ms`: a record whose timestamp falls in a later window
    /// of this many ms than the file's first record.
    Window(i64),
    /// Confluent's `rotate.interval.ms` (time from the partitioner's extractor).
    Interval {
        ms: i64,
        on_partition_change: bool,
    },
}

/// Everything the writers need, from either connector's keys.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `topics.dir` (or the store URL's prefix) as path segments.
    pub topics_dir: Vec<String>,
    pub partitioner: Partitioner,
    /// `s3.schema.partition.affix.type`.
    pub schema_affix: Option<SchemaAffix>,
    pub format: Format,
    /// `store.kafka.keys` with `keys.format.class`, `store.kafka.headers` with
    /// `headers.format.class`: files of their own beside each value file.
    pub keys: Option<Format>,
    pub headers: Option<Format>,
    pub flush_size: usize,
    pub rotation: Rotation,
    /// `rotate.schedule.interval.ms` and the zone whose days it counts in.
    pub schedule: Option<(i64, Zone)>,
    pub zero_pad: usize,
    pub file_delim: String,
    pub nulls: NullValues,
    pub part_size: usize,
    /// Confluent's `schema.compatibility=NONE`: a value schema other than the file's first one
    /// (or a schema where there was none, or the reverse) ends the open files.
    pub rotate_on_schema_change: bool,
    /// `partitioner.max.open.files`: a record for another encoded partition when this many
    /// files are open ends them all first.
    pub max_open_files: Option<usize>,
    /// `retry.backoff.ms`: how long the runtime waits before redelivering a batch whose
    /// upload failed (Java's `context.timeout`); `None`: the runtime's own backoff.
    pub retry_backoff: Option<std::time::Duration>,
    /// `s3.object.tagging`: each stored value file is tagged with its offsets and record count.
    pub tagging: Option<Tagging>,
}

impl Settings {
    /// `<topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<start offset>.<ext>`.
    pub fn object_name(&self, tp: &TopicPartition, encoded: &str, start_offset: i64) -> Path {
        self.view_name(tp, encoded, start_offset, View::Value, &self.format)
    }

    /// The files a record goes to: the value's, then the key's and the headers' if stored.
    pub fn views(&self) -> impl Iterator<Item = (View, &Format)> {
        std::iter::once((View::Value, &self.format))
            .chain(self.keys.as_ref().map(|f| (View::Key, f)))
            .chain(self.headers.as_ref().map(|f| (View::Headers, f)))
    }

    /// A view's object: the value's name with the view's infix before `format`'s extension
    /// (`t+0+0000000000.keys.avro`).
    fn view_name(
        &self,
        tp: &TopicPartition,
        encoded: &str,
        start_offset: i64,
        view: View,
        format: &Format,
    ) -> Path {
        let d = &self.file_delim;
        let file = format!(
            "{topic}{d}{p}{d}{start_offset:0width$}{infix}{ext}",
            topic = tp.topic,
            p = tp.partition,
            width = self.zero_pad,
            infix = view.infix(),
            ext = format.extension()
        );
        Path::from_iter(
            self.topics_dir
                .iter()
                .map(String::as_str)
                .chain(std::iter::once(tp.topic.as_str()))
                .chain(encoded.split('/'))
                .chain(std::iter::once(file.as_str())),
        )
    }
}

/// `DateTimeUtils.getNextTimeAdjustedByDay`: the next multiple of `period` counted from the
/// start of the local day.
fn next_scheduled(now: i64, period: i64, zone: &Zone) -> i64 {
    let day = 86_400_000;
    let local = now + zone.offset_ms(now);
    let start_of_day = zone.local_to_utc(local.div_euclid(day) * day);
    let elapsed = now - start_of_day;
    start_of_day + (elapsed / period + 1) * period
}

/// One object being written: a view of the records of one encoded partition.
struct OpenFile {
    name: Path,
    view: View,
    writer: Box<dyn RecordWriter>,
    upload: Option<Box<dyn MultipartUpload>>,
}

/// The state of one topic-partition.
#[derive(Default)]
pub struct PartitionWriter {
    /// Per encoded partition, its files: the value's first, then the key's and headers'.
    files: BTreeMap<String, Vec<OpenFile>>,
    /// Value schema each open file started with.
    schemas: HashMap<String, Option<Schema>>,
    record_count: usize,
    base_ts: Option<i64>,
    window: Option<i64>,
    current_encoded: Option<String>,
    last_written: Option<i64>,
    /// Last offset handled (written, skipped or reported): a redelivered batch skips to after it.
    processed: Option<i64>,
    /// After a lost multipart upload: records are skipped until this offset comes again.
    skip_until: Option<i64>,
    /// Where a replay of the partition's open files starts.
    resume_from: Option<i64>,
    /// Ended files waiting for their PUT (with their tags under `s3.object.tagging`), and the
    /// offset committable once they are stored.
    pending: Vec<(Path, Vec<u8>, Option<FileTags>)>,
    pending_offset: Option<i64>,
    next_rotation: Option<i64>,
    /// A rewind for the task to request of the runtime.
    rewind: Option<i64>,
    /// Per encoded partition, the offsets and count of the records in its open files (the tags
    /// of `s3.object.tagging`).
    spans: BTreeMap<String, FileTags>,
}

/// What happened to a record.
pub enum Outcome {
    Written,
    Skipped,
    /// Not writable (partitioner or format): for the errant-record reporter.
    Errant(ConnectError),
}

impl PartitionWriter {
    /// Whether `offset` was already handled (a batch redelivered after a retriable error, or
    /// records before a rewind took effect).
    pub fn already_handled(&mut self, offset: i64) -> bool {
        if let Some(target) = self.skip_until {
            if offset != target {
                return true;
            }
            self.skip_until = None;
        }
        self.processed.is_some_and(|p| offset <= p)
    }

    pub fn mark_handled(&mut self, offset: i64) {
        self.processed = Some(offset);
        self.resume_from.get_or_insert(offset);
    }

    /// Uploads ended files still waiting; the committable offset moves once all are stored.
    pub async fn flush_pending(
        &mut self,
        s: &Settings,
        store: &Arc<dyn ObjectStore>,
        committed: &mut Option<i64>,
    ) -> Result<()> {
        while let Some((name, bytes, _)) = self.pending.first() {
            let size = bytes.len();
            store
                .put(name, PutPayload::from(bytes.clone()))
                .await
                .map_err(|e| {
                    ConnectError::retriable(format!("failed to upload {name}")).with_source(e)
                })?;
            tracing::debug!(object = %name, size, "uploaded");
            let (name, _, tags) = self.pending.remove(0);
            if let (Some(tagging), Some(tags)) = (&s.tagging, tags) {
                tagging.tag(&name, &tags).await?;
            }
        }
        if let Some(o) = self.pending_offset.take() {
            *committed = Some(o);
            self.resume_from = Some(o);
        }
        Ok(())
    }

    /// Writes one record (its offset not yet handled), ending files before or after it as the
    /// rotation rules say.
    pub async fn write(
        &mut self,
        s: &Settings,
        store: &Arc<dyn ObjectStore>,
        tp: &TopicPartition,
        record: &SinkRecord,
        now: i64,
        committed: &mut Option<i64>,
    ) -> Result<Outcome> {
        if record.value.is_null() {
            match s.nulls {
                NullValues::Fail => {
                    return Err(ConnectError::fatal(format!(
                        "Null valued records are not writeable with current \
                         behavior.on.null.values 'settings. (record {}-{}@{})",
                        record.topic, record.kafka_partition, record.kafka_offset
                    )));
                }
                NullValues::Ignore { report } => {
                    return Ok(if report {
                        Outcome::Errant(ConnectError::data("Skipping null value record."))
                    } else {
                        Outcome::Skipped
                    });
                }
                NullValues::Write | NullValues::Tombstones { .. } => {}
            }
        }
        let tombstone = match &s.nulls {
            NullValues::Tombstones { partition } if record.value.is_null() => Some(partition),
            _ => None,
        };
        let encoded = loop {
            // A tombstone's time is the record's (Confluent's `TombstoneTimestampExtractor`).
            let extractor = match (tombstone, s.partitioner.extractor()) {
                (Some(_), Some(_)) => Some(&TimestampExtractor::Record),
                (_, ex) => ex,
            };
            let ts = match extractor {
                Some(ex) => match ex.extract(record, now) {
                    Ok(t) => Some(t),
                    Err(e) => return Ok(Outcome::Errant(e)),
                },
                None => None,
            };
            // As Confluent's writer: the first record handled after files end sets the base
            // time, even if it then cannot be written.
            if self.base_ts.is_none() {
                self.base_ts = ts;
            }
            let encoded = match tombstone {
                Some(partition) => partition.clone(),
                None => match s.partitioner.encode(record, now) {
                    Ok(e) => match s.schema_affix {
                        Some(affix) => affix.apply(&e, record.value_schema.as_ref()),
                        None => e,
                    },
                    Err(e) => return Ok(Outcome::Errant(e)),
                },
            };
            if self.record_count > 0 && self.rotates_before(s, record, ts, &encoded, now) {
                self.end_files(s, store, tp, committed).await?;
                continue;
            }
            break encoded;
        };
        // The files of the record: its value's (none for a tombstone), key's and headers'. The
        // views other than the value are made first (a null key, no headers are the record's
        // errors) and checked by their files before the first file takes the record, so that no
        // file gets a record another refuses.
        let views: Vec<(View, &Format)> = s
            .views()
            .filter(|(view, _)| !(tombstone.is_some() && *view == View::Value))
            .collect();
        let mut data: Vec<Option<(Option<Schema>, Value)>> = Vec::with_capacity(views.len());
        for (view, format) in &views {
            if *view == View::Value {
                data.push(None);
                continue;
            }
            match view.of(record, format) {
                Ok(v) => data.push(Some(v)),
                Err(e) if e.kind() == ErrorKind::Data => return Ok(Outcome::Errant(e)),
                Err(e) => return Err(e),
            }
        }
        /// A file's schema and value: its view's, or for the value file the record's own
        /// (without a copy).
        fn view_data<'a>(
            d: &'a Option<(Option<Schema>, Value)>,
            record: &'a SinkRecord,
        ) -> (Option<&'a Schema>, &'a Value) {
            match d {
                Some((schema, value)) => (schema.as_ref(), value),
                None => (record.value_schema.as_ref(), &record.value),
            }
        }
        let is_new = !self.files.contains_key(&encoded);
        if is_new {
            let files = views
                .iter()
                .map(|(view, format)| OpenFile {
                    name: s.view_name(tp, &encoded, record.kafka_offset, *view, format),
                    view: *view,
                    writer: format.new_writer(),
                    upload: None,
                })
                .collect();
            self.files.insert(encoded.clone(), files);
        }
        let files = self.files.get_mut(&encoded).expect("inserted above");
        let (first, others) = files.split_first_mut().expect("a file per record");
        let (first_data, others_data) = data.split_first().expect("a view per file");
        let mut refused = None;
        for (f, d) in others.iter_mut().zip(others_data) {
            let (schema, value) = view_data(d, record);
            if let Err(e) = f.writer.check(schema, value) {
                refused = Some(e);
                break;
            }
        }
        let refused = match refused {
            Some(e) => Some(e),
            None => {
                let (schema, value) = view_data(first_data, record);
                first.writer.write(schema, value).err()
            }
        };
        if let Some(e) = refused {
            if is_new {
                self.files.remove(&encoded);
            }
            return match e.kind() {
                ErrorKind::Data => Ok(Outcome::Errant(e)),
                _ => Err(e),
            };
        }
        for (f, d) in others.iter_mut().zip(others_data) {
            let (schema, value) = view_data(d, record);
            f.writer.write(schema, value).map_err(|e| {
                ConnectError::fatal(format!(
                    "the {:?} file {} refused a record it had accepted: {}",
                    f.view,
                    f.name,
                    e.message()
                ))
            })?;
        }
        self.schemas
            .entry(encoded.clone())
            .or_insert_with(|| record.value_schema.clone());
        if self.record_count == 0 {
            self.window = match s.rotation {
                Rotation::Window(ms) => Some(record.timestamp.unwrap_or(0).div_euclid(ms)),
                _ => None,
            };
        }
        self.record_count += 1;
        self.last_written = Some(record.kafka_offset);
        let span = self.spans.entry(encoded.clone()).or_insert(FileTags {
            start: record.kafka_offset,
            end: record.kafka_offset,
            records: 0,
        });
        span.end = record.kafka_offset;
        span.records += 1;
        self.current_encoded = Some(encoded.clone());
        if let Some((period, zone)) = &s.schedule
            && self.next_rotation.is_none()
        {
            self.next_rotation = Some(next_scheduled(now, *period, zone));
        }
        if let Err(e) = self.ship_parts(s, store, &encoded).await {
            self.lose(tp).await;
            return Err(e);
        }
        if self.record_count >= s.flush_size {
            self.end_files(s, store, tp, committed).await?;
        }
        Ok(Outcome::Written)
    }

    fn rotates_before(
        &self,
        s: &Settings,
        record: &SinkRecord,
        ts: Option<i64>,
        encoded: &str,
        now: i64,
    ) -> bool {
        let on_time = match &s.rotation {
            Rotation::None => false,
            Rotation::Window(ms) => {
                self.window != Some(record.timestamp.unwrap_or(0).div_euclid(*ms))
            }
            Rotation::Interval {
                ms,
                on_partition_change,
            } => {
                let tombstones = match &s.nulls {
                    NullValues::Tombstones { partition } => Some(partition.as_str()),
                    _ => None,
                };
                // Moving to or from the tombstone partition is no partition change
                // (Confluent's `shouldRotateOnPartitionChangeWithTombstoneCheck`).
                let tombstone_move = tombstones.is_some_and(|t| {
                    self.current_encoded.is_some()
                        && (encoded == t || self.current_encoded.as_deref() == Some(t))
                });
                ts.zip(self.base_ts).is_some_and(|(t, b)| t - b >= *ms)
                    || (*on_partition_change
                        && !tombstone_move
                        && self.current_encoded.as_deref() != Some(encoded))
            }
        };
        let scheduled = self.next_rotation.is_some_and(|at| now >= at);
        let schema_changed = s.rotate_on_schema_change
            && self
                .schemas
                .get(encoded)
                .is_some_and(|first| first.as_ref() != record.value_schema.as_ref());
        let too_many = s
            .max_open_files
            .is_some_and(|max| !self.files.contains_key(encoded) && self.files.len() >= max);
        on_time || scheduled || schema_changed || too_many
    }

    /// Whether the wall-clock schedule says the open files should end now.
    pub fn schedule_due(&self, now: i64) -> bool {
        self.record_count > 0 && self.next_rotation.is_some_and(|at| now >= at)
    }

    /// Sends every full part of a file's bytes as a multipart-upload part.
    async fn ship_parts(
        &mut self,
        s: &Settings,
        store: &Arc<dyn ObjectStore>,
        encoded: &str,
    ) -> Result<()> {
        for file in self.files.get_mut(encoded).expect("open files") {
            while file.writer.output().len() >= s.part_size {
                let part: Vec<u8> = file.writer.output().drain(..s.part_size).collect();
                if file.upload.is_none() {
                    let upload = store.put_multipart(&file.name).await.map_err(|e| {
                        ConnectError::retriable(format!(
                            "failed to start the multipart upload of {}",
                            file.name
                        ))
                        .with_source(e)
                    })?;
                    file.upload = Some(upload);
                }
                let upload = file.upload.as_mut().expect("started above");
                upload.put_part(PutPayload::from(part)).await.map_err(|e| {
                    ConnectError::retriable(format!("failed to upload a part of {}", file.name))
                        .with_source(e)
                })?;
                tracing::debug!(object = %file.name, "uploaded a part");
            }
        }
        Ok(())
    }

    /// Ends every open file and uploads them; the committable offset moves when all are stored.
    pub async fn end_files(
        &mut self,
        s: &Settings,
        store: &Arc<dyn ObjectStore>,
        tp: &TopicPartition,
        committed: &mut Option<i64>,
    ) -> Result<()> {
        let files = std::mem::take(&mut self.files);
        let mut spans = std::mem::take(&mut self.spans);
        let mut multipart = Vec::new();
        for (encoded, files) in files {
            // As Confluent's writer, one object per encoded partition is tagged: its first
            // file's (the value's; the keys' for tombstones).
            let mut tags = spans.remove(&encoded).filter(|_| s.tagging.is_some());
            for mut f in files {
                f.writer.finish()?;
                let tail = std::mem::take(f.writer.output());
                let tags = tags.take();
                match f.upload {
                    Some(up) => multipart.push((f.name, up, tail, tags)),
                    None => self.pending.push((f.name, tail, tags)),
                }
            }
        }
        let mut to_tag = Vec::new();
        let mut multipart = multipart.into_iter();
        while let Some((name, mut up, tail, tags)) = multipart.next() {
            let done = async {
                if !tail.is_empty() {
                    up.put_part(PutPayload::from(tail)).await?;
                }
                up.complete().await
            };
            if let Err(e) = done.await {
                // The uploads not completed yet are lost with this one: abort them too.
                let _ = up.abort().await;
                for (_, mut rest, _, _) in multipart {
                    let _ = rest.abort().await;
                }
                self.lose(tp).await;
                return Err(ConnectError::retriable(format!(
                    "failed to complete the multipart upload of {name}"
                ))
                .with_source(e));
            }
            tracing::debug!(object = %name, "uploaded (multipart)");
            if let Some(tags) = tags {
                to_tag.push((name, tags));
            }
        }
        // Tagged once every upload of this end is complete (a failure to tag stops the task
        // under s3.object.behavior.on.tagging.error=fail; no upload is left open then).
        if let Some(tagging) = &s.tagging {
            for (name, tags) in &to_tag {
                tagging.tag(name, tags).await?;
            }
        }
        self.pending_offset = self.last_written.map(|o| o + 1);
        self.record_count = 0;
        self.base_ts = None;
        self.window = None;
        self.schemas.clear();
        self.next_rotation = None;
        self.flush_pending(s, store, committed).await
    }

    /// Drops the open files after a multipart upload failed, aborts their uploads and asks for
    /// the records since the last ended files again.
    async fn lose(&mut self, tp: &TopicPartition) {
        for f in std::mem::take(&mut self.files).into_values().flatten() {
            if let Some(mut up) = f.upload
                && let Err(e) = up.abort().await
            {
                tracing::warn!(object = %f.name, error = %e, "failed to abort a multipart upload");
            }
        }
        let resume = self.resume_from;
        *self = PartitionWriter::default();
        self.skip_until = resume;
        self.resume_from = resume;
        self.rewind = resume;
        tracing::warn!(partition = ?tp, resume_from = ?resume, "a multipart upload failed; rewriting the partition's open files");
    }

    /// The offset to rewind the consumer to after a lost multipart upload (once).
    pub fn take_rewind(&mut self) -> Option<i64> {
        self.rewind.take()
    }

    /// Aborts open multipart uploads (partition closed or task stopped).
    pub async fn abort(mut self) {
        for f in std::mem::take(&mut self.files).into_values().flatten() {
            if let Some(mut up) = f.upload {
                let _ = up.abort().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduled_rotation_counts_from_the_local_day() {
        let utc = Zone::utc();
        // 10:07 with a 15-minute period: 10:15.
        let now = 10 * 3_600_000 + 7 * 60_000;
        assert_eq!(
            next_scheduled(now, 900_000, &utc),
            10 * 3_600_000 + 15 * 60_000
        );
        let plus1 = Zone::parse("+01:00").unwrap();
        // 23:30 UTC is 00:30 local: the day started at 23:00 UTC; hourly: 00:00 UTC.
        let now = 23 * 3_600_000 + 30 * 60_000;
        assert_eq!(next_scheduled(now, 3_600_000, &plus1), 24 * 3_600_000);
    }
}
