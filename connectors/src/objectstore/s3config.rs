//! Confluent's S3 sink keys (`io.confluent.connect.s3.S3SinkConnector`), their defaults, and
//! the typed [`Settings`] they give.
//!
//! Every key of Confluent's `S3SinkConnectorConfig` (with storage-common's partitioner and
//! format keys) is defined. The ones this worker implements behave as Confluent's; each of the
//! others ([`UNIMPLEMENTED`]) accepts only Confluent's default and is a validation error naming
//! it otherwise, so nothing configured is silently ignored.

use std::sync::Arc;

use connect_api::config::validators::{at_least, between, lambda, one_of, one_of_case_insensitive};
use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType, Importance, ParsedConfig};
use connect_api::config::{ConfigValue, TypedValue};
use connect_api::converter::DecimalFormat;
use connect_api::error::{ConnectError, Result};
use connect_registry::avro::data::AvroDataConfig;
use object_store::ObjectStore;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};

use super::format::avro::{AvroCodec, AvroOptions};
use super::format::lines::{ByteArrayOptions, Compression, JsonOptions};
use super::format::parquet::{ParquetCodec, ParquetOptions};
use super::format::{AVRO_FORMAT, BYTEARRAY_FORMAT, Format, JSON_FORMAT, PARQUET_FORMAT};
use super::joda::{JodaFormat, Zone};
use super::partitioner::{
    DAILY_PARTITIONER, DEFAULT_PARTITIONER, FIELD_PARTITIONER, HOURLY_PARTITIONER, Partitioner,
    SchemaAffix, TIME_BASED_PARTITIONER, TimestampExtractor,
};
use super::tagging::{self, S3Tagger, Tagging};
use super::writer::{NullValues, Rotation, Settings};

pub const S3_BUCKET_CONFIG: &str = "s3.bucket.name";
pub const S3_REGION_CONFIG: &str = "s3.region";
pub const STORE_URL_CONFIG: &str = "store.url";
pub const TOPICS_DIR_CONFIG: &str = "topics.dir";
pub const FORMAT_CLASS_CONFIG: &str = "format.class";
pub const STORAGE_CLASS_CONFIG: &str = "storage.class";
pub const FLUSH_SIZE_CONFIG: &str = "flush.size";
pub const ROTATE_INTERVAL_MS_CONFIG: &str = "rotate.interval.ms";
pub const ROTATE_SCHEDULE_INTERVAL_MS_CONFIG: &str = "rotate.schedule.interval.ms";
pub const ROTATE_FILE_ON_PARTITION_CHANGE_CONFIG: &str = "rotate.file.on.partition.change";
pub const PARTITIONER_CLASS_CONFIG: &str = "partitioner.class";
pub const PARTITION_FIELD_NAME_CONFIG: &str = "partition.field.name";
pub const PATH_FORMAT_CONFIG: &str = "path.format";
pub const PARTITION_DURATION_MS_CONFIG: &str = "partition.duration.ms";
pub const LOCALE_CONFIG: &str = "locale";
pub const TIMEZONE_CONFIG: &str = "timezone";
pub const TIMESTAMP_EXTRACTOR_CONFIG: &str = "timestamp.extractor";
pub const TIMESTAMP_FIELD_CONFIG: &str = "timestamp.field";
pub const FILENAME_OFFSET_ZERO_PAD_WIDTH_CONFIG: &str = "filename.offset.zero.pad.width";
pub const DIRECTORY_DELIM_CONFIG: &str = "directory.delim";
pub const FILE_DELIM_CONFIG: &str = "file.delim";
pub const PART_SIZE_CONFIG: &str = "s3.part.size";
pub const AWS_ACCESS_KEY_ID_CONFIG: &str = "aws.access.key.id";
pub const AWS_SECRET_ACCESS_KEY_CONFIG: &str = "aws.secret.access.key";
pub const PATH_STYLE_ACCESS_CONFIG: &str = "s3.path.style.access.enabled";
pub const RETRY_BACKOFF_CONFIG: &str = "retry.backoff.ms";
pub const PART_RETRIES_CONFIG: &str = "s3.part.retries";
pub const S3_RETRY_BACKOFF_CONFIG: &str = "s3.retry.backoff.ms";
pub const SSEA_CONFIG: &str = "s3.ssea.name";
pub const SSE_KMS_KEY_ID_CONFIG: &str = "s3.sse.kms.key.id";
pub const SSE_CUSTOMER_KEY_CONFIG: &str = "s3.sse.customer.key";
pub const PARTITIONER_MAX_OPEN_FILES_CONFIG: &str = "partitioner.max.open.files";
pub const SCHEMA_PARTITION_AFFIX_TYPE_CONFIG: &str = "s3.schema.partition.affix.type";
pub const BEHAVIOR_ON_NULL_VALUES_CONFIG: &str = "behavior.on.null.values";
pub const TOMBSTONE_ENCODED_PARTITION_CONFIG: &str = "tombstone.encoded.partition";
pub const STORE_KAFKA_KEYS_CONFIG: &str = "store.kafka.keys";
pub const STORE_KAFKA_HEADERS_CONFIG: &str = "store.kafka.headers";
pub const KEYS_FORMAT_CLASS_CONFIG: &str = "keys.format.class";
pub const HEADERS_FORMAT_CLASS_CONFIG: &str = "headers.format.class";
pub const AVRO_CODEC_CONFIG: &str = "avro.codec";
pub const PARQUET_CODEC_CONFIG: &str = "parquet.codec";
pub const BYTEARRAY_EXTENSION_CONFIG: &str = "format.bytearray.extension";
pub const BYTEARRAY_SEPARATOR_CONFIG: &str = "format.bytearray.separator";
pub const JSON_DECIMAL_FORMAT_CONFIG: &str = "json.decimal.format";
pub const COMPRESSION_TYPE_CONFIG: &str = "s3.compression.type";
pub const COMPRESSION_LEVEL_CONFIG: &str = "s3.compression.level";
pub const ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG: &str = "enhanced.avro.schema.support";
pub const CONNECT_META_DATA_CONFIG: &str = "connect.meta.data";
pub const ALLOW_OPTIONAL_MAP_KEYS_CONFIG: &str = "allow.optional.map.keys";
pub const SCHEMA_CACHE_SIZE_CONFIG: &str = "schemas.cache.config";
pub const SCHEMA_COMPATIBILITY_CONFIG: &str = "schema.compatibility";
pub const OBJECT_TAGGING_CONFIG: &str = "s3.object.tagging";
pub const OBJECT_TAGGING_EXTRA_KV_CONFIG: &str = "s3.object.tagging.key.value.pairs";
pub const BEHAVIOR_ON_TAGGING_ERROR_CONFIG: &str = "s3.object.behavior.on.tagging.error";

pub const S3_STORAGE_CLASS: &str = "io.confluent.connect.s3.storage.S3Storage";
/// `timestamp.extractor` may name the extractors by class, as Confluent's
/// `newTimestampExtractor` accepts.
const WALLCLOCK_EXTRACTOR_CLASS: &str =
    "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$WallclockTimestampExtractor";
const RECORD_EXTRACTOR_CLASS: &str =
    "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordTimestampExtractor";
const RECORD_FIELD_EXTRACTOR_CLASS: &str =
    "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordFieldTimestampExtractor";
const PART_SIZE_MIN: i64 = 5 * 1024 * 1024;
const PART_SIZE_MAX: i64 = i32::MAX as i64;

/// Confluent keys this worker does not implement, with the values it accepts for them
/// (Confluent's default, in the spellings met in practice). Any other value is a validation
/// error naming the key.
pub const UNIMPLEMENTED: &[(&str, &[&str])] = &[
    ("s3.acl.canned", &[""]),
    ("s3.wan.mode", &["false"]),
    ("s3.send.digest", &["false"]),
    ("s3.proxy.url", &[""]),
    ("s3.proxy.user", &[""]),
    ("s3.proxy.password", &[""]),
    ("s3.elastic.buffer.enable", &["false"]),
    (
        "s3.credentials.provider.class",
        &[
            "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider",
            "com.amazonaws.auth.DefaultAWSCredentialsProviderChain",
        ],
    ),
    ("max.write.duration.ms", &["9223372036854775807"]),
    ("hive.integration", &["false"]),
];

fn unimplemented_validator(name: &'static str, accepted: &'static [&'static str]) -> ConfigKey {
    let shown = accepted.first().copied().unwrap_or("");
    // Secrets stay secrets in validation output.
    let ty = if name.ends_with(".password") || name.ends_with(".customer.key") {
        ConfigType::Password
    } else {
        ConfigType::String
    };
    ConfigKey::new(
        name,
        ty,
        Importance::Low,
        format!("Confluent's key, not implemented by this worker: only its default ({shown:?}) is accepted"),
    )
    .default_null()
    .validator(lambda(format!("only {shown:?}"), move |key, v| {
        let raw = match v {
            None => return Ok(()),
            Some(TypedValue::Password(p)) => p.value().trim(),
            Some(v) => v.as_str().unwrap_or("").trim(),
        };
        if raw.is_empty() && accepted.contains(&"") {
            return Ok(());
        }
        if accepted.iter().any(|a| a.eq_ignore_ascii_case(raw)) {
            return Ok(());
        }
        Err(ConnectError::invalid_value(
            key,
            raw,
            &format!(
                "{key} is not implemented by this worker's S3 sink; only Confluent's default \
                 {shown:?} is accepted"
            ),
        ))
    }))
}

fn key(name: &str, ty: ConfigType, importance: Importance, doc: &str) -> ConfigKey {
    ConfigKey::new(name, ty, importance, doc)
}

pub fn s3_config_def() -> ConfigDef {
    use ConfigType::{Boolean, Class, Int, List, Long, Password, String};
    use Importance::{High, Low, Medium};
    let mut def = ConfigDef::new()
        .define(key(S3_BUCKET_CONFIG, String, High, "The S3 Bucket."))
        .define(key(S3_REGION_CONFIG, String, Medium, "The AWS region to be used the connector.")
            .default_value("us-west-2"))
        .define(key(STORE_URL_CONFIG, String, High, "Store's connection URL, if applicable: the S3 endpoint (http:// allowed).")
            .default_null())
        .define(key(TOPICS_DIR_CONFIG, String, High, "Top level directory to store the data ingested from Kafka.")
            .default_value("topics"))
        .define(key(FORMAT_CLASS_CONFIG, Class, High, "The format class to use when writing data to the store.")
            .validator(one_of(&[JSON_FORMAT, BYTEARRAY_FORMAT, AVRO_FORMAT, PARQUET_FORMAT])))
        .define(key(STORAGE_CLASS_CONFIG, Class, High, "The underlying storage layer.")
            .default_value(S3_STORAGE_CLASS)
            .validator(one_of(&[S3_STORAGE_CLASS])))
        .define(key(FLUSH_SIZE_CONFIG, Int, High, "Number of records written to store before invoking file commits.")
            .validator(at_least(1)))
        .define(key(ROTATE_INTERVAL_MS_CONFIG, Long, High, "The time interval in milliseconds to invoke file commits: a file ends when a record's time (from the partitioner's timestamp extractor) is this much after the file's first record's time. Time-based partitioners only.")
            .default_value(-1i64))
        .define(key(ROTATE_SCHEDULE_INTERVAL_MS_CONFIG, Long, Medium, "The time interval in milliseconds to periodically invoke file commits, on the wall clock (not repeatable: see the docs).")
            .default_value(-1i64))
        .define(key(ROTATE_FILE_ON_PARTITION_CHANGE_CONFIG, Boolean, Low, "With rotate.interval.ms, end the open files when a record goes to another encoded partition.")
            .default_value(true))
        .define(key(PARTITIONER_CLASS_CONFIG, Class, High, "The partitioner to use when writing data to the store.")
            .default_value(DEFAULT_PARTITIONER)
            .validator(one_of(&[DEFAULT_PARTITIONER, FIELD_PARTITIONER, TIME_BASED_PARTITIONER, DAILY_PARTITIONER, HOURLY_PARTITIONER])))
        .define(key(PARTITION_FIELD_NAME_CONFIG, List, Medium, "The name of the partitioning field when FieldPartitioner is used.")
            .default_value(Vec::<std::string::String>::new()))
        .define(key(PATH_FORMAT_CONFIG, String, Medium, "The Joda-Time pattern of the directories of TimeBasedPartitioner.")
            .default_value(""))
        .define(key(PARTITION_DURATION_MS_CONFIG, Long, Medium, "The duration of a partition in milliseconds used by TimeBasedPartitioner.")
            .default_value(-1i64))
        .define(key(LOCALE_CONFIG, String, Medium, "The locale to use when partitioning with TimeBasedPartitioner.")
            .default_value(""))
        .define(key(TIMEZONE_CONFIG, String, Medium, "The timezone to use when partitioning with TimeBasedPartitioner: UTC, a fixed offset or an IANA id.")
            .default_value(""))
        .define(key(TIMESTAMP_EXTRACTOR_CONFIG, String, Medium, "Where TimeBasedPartitioner takes a record's time: Wallclock, Record or RecordField.")
            .default_value("Wallclock")
            .validator(one_of(&[
                "Wallclock",
                "Record",
                "RecordField",
                WALLCLOCK_EXTRACTOR_CLASS,
                RECORD_EXTRACTOR_CLASS,
                RECORD_FIELD_EXTRACTOR_CLASS,
            ])))
        .define(key(TIMESTAMP_FIELD_CONFIG, String, Medium, "The record field to be used as timestamp by the RecordField timestamp extractor.")
            .default_value("timestamp"))
        .define(key(FILENAME_OFFSET_ZERO_PAD_WIDTH_CONFIG, Int, Low, "Width to zero-pad offsets in store's filenames if offsets are too short in order to provide fixed-width filenames that can be ordered by simple lexicographic sorting.")
            .default_value(10)
            .validator(at_least(0)))
        .define(key(DIRECTORY_DELIM_CONFIG, String, Low, "Directory delimiter pattern (only / here).")
            .default_value("/")
            .validator(one_of(&["/"])))
        .define(key(FILE_DELIM_CONFIG, String, Low, "File delimiter pattern.")
            .default_value("+"))
        .define(key(PART_SIZE_CONFIG, Int, High, "The Part Size in S3 Multi-part Uploads: files longer than this are uploaded in parts of this size while they are written.")
            .default_value(25 * 1024 * 1024)
            .validator(between(PART_SIZE_MIN, PART_SIZE_MAX)))
        .define(key(AWS_ACCESS_KEY_ID_CONFIG, String, High, "The AWS access key ID; empty: the AWS default credentials chain.")
            .default_value(""))
        .define(key(AWS_SECRET_ACCESS_KEY_CONFIG, Password, High, "The secret access key.")
            .default_null())
        .define(key(SSEA_CONFIG, String, Low, "The S3 Server Side Encryption Algorithm: AES256 (SSE-S3, or SSE-C with s3.sse.customer.key) or aws:kms (SSE-KMS with s3.sse.kms.key.id); empty: none.")
            .default_value("")
            .validator(one_of(&["", "AES256", "aws:kms"])))
        .define(key(SSE_KMS_KEY_ID_CONFIG, String, Low, "The name of the AWS Key Management Service key to be used for server side encryption with aws:kms.")
            .default_value(""))
        .define(key(SSE_CUSTOMER_KEY_CONFIG, Password, Low, "The base64-encoded 256-bit key of SSE-C (with s3.ssea.name=AES256).")
            .default_null())
        .define(key(SCHEMA_PARTITION_AFFIX_TYPE_CONFIG, String, Low, "Append the record schema name to prefix or suffix in the s3 path after the topic name: NONE, PREFIX or SUFFIX (schema_name=<name>).")
            .default_value("NONE")
            .validator(one_of(&["NONE", "PREFIX", "SUFFIX"])))
        .define(key(PARTITIONER_MAX_OPEN_FILES_CONFIG, Int, Low, "Maximum open files per topic partition: a record for another encoded partition when this many are open ends them all first; -1: no limit.")
            .default_value(-1)
            .validator(lambda("-1 or at least 1", |key, v| match v {
                Some(TypedValue::Int(n)) if *n == 0 || *n < -1 => Err(ConnectError::invalid_value(
                    key,
                    n,
                    "must be -1 (no limit) or at least 1",
                )),
                _ => Ok(()),
            })))
        .define(key(PATH_STYLE_ACCESS_CONFIG, Boolean, Low, "Specifies whether or not to enable path style access to the bucket used by the connector.")
            .default_value(true))
        .define(key(BEHAVIOR_ON_NULL_VALUES_CONFIG, String, Low, "How to handle records with a null value: fail (the task fails), ignore (skipped) or write (to tombstone.encoded.partition, where only their keys and headers are written; needs store.kafka.keys=true).")
            .default_value("fail")
            .validator(one_of_case_insensitive(&["fail", "ignore", "write"])))
        .define(key(TOMBSTONE_ENCODED_PARTITION_CONFIG, String, Low, "The encoded partition of records with a null value when behavior.on.null.values=write.")
            .default_value("tombstone"))
        .define(key("report.null.values.to.dlq", Boolean, Low, "Report records with null values to the dead letter queue when behavior.on.null.values=ignore (needs errors.tolerance=all and a DLQ).")
            .default_value(true))
        .define(key(STORE_KAFKA_KEYS_CONFIG, Boolean, Low, "Enable or disable writing keys to storage: files named as the value files with .keys before keys.format.class's extension.")
            .default_value(false))
        .define(key(STORE_KAFKA_HEADERS_CONFIG, Boolean, Low, "Enable or disable writing headers to storage: files named as the value files with .headers before headers.format.class's extension.")
            .default_value(false))
        .define(key(KEYS_FORMAT_CLASS_CONFIG, Class, Low, "The format class to use when writing keys to the store.")
            .default_value(AVRO_FORMAT)
            .validator(one_of(&[JSON_FORMAT, BYTEARRAY_FORMAT, AVRO_FORMAT, PARQUET_FORMAT])))
        .define(key(HEADERS_FORMAT_CLASS_CONFIG, Class, Low, "The format class to use when writing headers to the store (not ByteArrayFormat).")
            .default_value(AVRO_FORMAT)
            .validator(one_of(&[JSON_FORMAT, AVRO_FORMAT, PARQUET_FORMAT])))
        .define(key(AVRO_CODEC_CONFIG, String, Low, "The Avro compression codec: null, deflate or snappy (bzip2 is not implemented).")
            .default_value("null")
            .validator(one_of(&["null", "deflate", "snappy"])))
        .define(key(PARQUET_CODEC_CONFIG, String, Low, "The Parquet compression codec: none, snappy, gzip or zstd.")
            .default_value("snappy")
            .validator(one_of(&["none", "snappy", "gzip", "zstd"])))
        .define(key(BYTEARRAY_EXTENSION_CONFIG, String, Low, "Output file extension for ByteArrayFormat.")
            .default_value(".bin"))
        .define(key(BYTEARRAY_SEPARATOR_CONFIG, String, Low, "String inserted between records for ByteArrayFormat (default: a newline).")
            .default_null())
        .define(key(COMPRESSION_TYPE_CONFIG, String, Low, "Compression type for files written to S3 by JsonFormat and ByteArrayFormat: none or gzip (.gz after the extension).")
            .default_value("none")
            .validator(one_of(&["none", "gzip"])))
        .define(key(COMPRESSION_LEVEL_CONFIG, Int, Low, "Compression level of gzip: -1 (the default level) or 0 to 9.")
            .default_value(-1)
            .validator(between(-1, 9)))
        .define(key(JSON_DECIMAL_FORMAT_CONFIG, String, Low, "Controls which format json converter will serialize decimals in: BASE64 or NUMERIC.")
            .default_value("BASE64")
            .validator(one_of_case_insensitive(&["BASE64", "NUMERIC"])))
        .define(key(ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG, Boolean, Low, "Enable enhanced avro schema support in AvroConverter: Enum symbol preservation and Package Name awareness.")
            .default_value(true))
        .define(key(CONNECT_META_DATA_CONFIG, Boolean, Low, "Allow connect converter to add its meta data to the output schema.")
            .default_value(true))
        .define(key(ALLOW_OPTIONAL_MAP_KEYS_CONFIG, Boolean, Low, "Allow optional string map key when converting from Connect Schema to Avro Schema.")
            .default_value(false))
        .define(key(SCHEMA_CACHE_SIZE_CONFIG, Int, Low, "The size of the schema cache used in the Avro converter (accepted; this worker's mapping keeps no cache).")
            .default_value(1000))
        .define(key(SCHEMA_COMPATIBILITY_CONFIG, String, High, "The schema compatibility rule: NONE (a schema change ends the open files).")
            .default_value("NONE")
            .validator(one_of(&["NONE"])))
        .define(key(RETRY_BACKOFF_CONFIG, Long, Low, "The retry backoff in milliseconds: how long the task waits before a batch whose upload failed is delivered again.")
            .default_value(5000i64)
            .validator(at_least(0)))
        .define(key("shutdown.timeout.ms", Long, Medium, "Clean shutdown timeout (accepted; stopping drops the open files at once, their records are read again by the next owner).")
            .default_value(3000i64))
        .define(key(PART_RETRIES_CONFIG, Int, Medium, "Maximum number of retry attempts for failed requests (the S3 client's retries).")
            .default_value(3)
            .validator(at_least(0)))
        .define(key(S3_RETRY_BACKOFF_CONFIG, Long, Low, "How long to wait in milliseconds before attempting the first retry of a failed S3 request (doubling up to 20 s).")
            .default_value(200i64)
            .validator(at_least(0)))
        .define(key("s3.http.send.expect.continue", Boolean, Low, "Enable/disable use of the HTTP/1.1 handshake using EXPECT: 100-CONTINUE (accepted; this S3 client never sends it).")
            .default_value(true))
        .define(key("enable.conditional.writes", Boolean, Low, "Conditional writes during multipart upload (names here are deterministic; the key is accepted).")
            .default_value(true))
        .define(key("max.files.scan.limit", Int, Low, "Files scanned after a conditional-write conflict (accepted; unused here).")
            .default_value(100))
        .define(key("s3.elastic.buffer.init.capacity", Int, Low, "Elastic buffer initial capacity (accepted; unused here).")
            .default_value(128 * 1024))
        .define(key(OBJECT_TAGGING_CONFIG, Boolean, Low, "Tag S3 objects with start and end offsets, as well as record count (startOffset, endOffset, recordCount; PutObjectTagging once the object is stored).")
            .default_value(false))
        .define(key(OBJECT_TAGGING_EXTRA_KV_CONFIG, List, Low, "Additional S3 tag key value pairs (key:value, comma-separated), with s3.object.tagging=true.")
            .default_value(Vec::<std::string::String>::new())
            .validator(lambda("key:value pairs", |key, v| match v {
                Some(TypedValue::List(items)) => tagging::parse_pairs(items)
                    .map(|_| ())
                    .map_err(|e| ConnectError::invalid_value(key, items.join(","), &e)),
                _ => Ok(()),
            })))
        .define(key(BEHAVIOR_ON_TAGGING_ERROR_CONFIG, String, Low, "How to handle S3 object tagging error. Valid options are 'ignore' and 'fail'.")
            .default_value("ignore")
            .validator(one_of_case_insensitive(&["ignore", "fail"])));
    for (name, accepted) in UNIMPLEMENTED {
        def = def.define(unimplemented_validator(name, accepted));
    }
    def
}

/// The typed form of Confluent's keys.
#[derive(Debug, Clone)]
pub struct S3SinkConfig {
    pub settings: Settings,
    bucket: String,
    region: String,
    endpoint: Option<String>,
    access_key: Option<String>,
    secret_key: Option<String>,
    path_style: bool,
    encryption: Encryption,
    retry: object_store::RetryConfig,
    /// `s3.object.tagging=true`: the extra pairs and whether a tagging error fails the task.
    tagging: Option<(Vec<(String, String)>, bool)>,
}

/// `s3.ssea.name` with its key.
#[derive(Debug, Clone)]
enum Encryption {
    None,
    /// SSE-S3.
    Aes256,
    /// SSE-C with this base64 key.
    Customer(String),
    /// SSE-KMS with this key id.
    Kms(String),
}

/// Checks between keys (a partitioner's own keys, rotation needing a time-based partitioner);
/// `(key, value, reason)` per problem.
fn cross_check(p: &ParsedConfig) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    if let Err(e) = partitioner(p) {
        out.push(e);
    }
    let time_based = matches!(
        p.class(PARTITIONER_CLASS_CONFIG),
        Some(TIME_BASED_PARTITIONER | DAILY_PARTITIONER | HOURLY_PARTITIONER)
    );
    let rotate = p.long(ROTATE_INTERVAL_MS_CONFIG).unwrap_or(-1);
    if rotate > 0 && !time_based {
        out.push((
            ROTATE_INTERVAL_MS_CONFIG,
            rotate.to_string(),
            "needs a time-based partitioner (Confluent's sink ignores it then; this worker \
             refuses rather than ignore a setting)"
                .to_owned(),
        ));
    }
    if p.string(COMPRESSION_TYPE_CONFIG) == Some("gzip")
        && matches!(
            p.class(FORMAT_CLASS_CONFIG),
            Some(AVRO_FORMAT | PARQUET_FORMAT)
        )
    {
        out.push((
            COMPRESSION_TYPE_CONFIG,
            "gzip".to_owned(),
            "applies to JsonFormat and ByteArrayFormat files only (Confluent's sink ignores it \
             for Avro and Parquet; use avro.codec or parquet.codec)"
                .to_owned(),
        ));
    }
    let ssea = p.string(SSEA_CONFIG).unwrap_or("");
    let kms = p.string(SSE_KMS_KEY_ID_CONFIG).unwrap_or("");
    let customer = p
        .password(SSE_CUSTOMER_KEY_CONFIG)
        .is_some_and(|k| !k.value().is_empty());
    if ssea == "aws:kms" && kms.is_empty() {
        out.push((
            SSE_KMS_KEY_ID_CONFIG,
            String::new(),
            "s3.ssea.name=aws:kms needs the KMS key id (Confluent's sink then writes without \
             encryption)"
                .to_owned(),
        ));
    }
    if !kms.is_empty() && ssea != "aws:kms" {
        out.push((
            SSE_KMS_KEY_ID_CONFIG,
            kms.to_owned(),
            "applies with s3.ssea.name=aws:kms only".to_owned(),
        ));
    }
    if customer && ssea != "AES256" {
        out.push((
            SSE_CUSTOMER_KEY_CONFIG,
            "[hidden]".to_owned(),
            "applies with s3.ssea.name=AES256 only".to_owned(),
        ));
    }
    let nulls = p.string(BEHAVIOR_ON_NULL_VALUES_CONFIG).unwrap_or("fail");
    if nulls.eq_ignore_ascii_case("write") && p.boolean(STORE_KAFKA_KEYS_CONFIG) != Some(true) {
        out.push((
            BEHAVIOR_ON_NULL_VALUES_CONFIG,
            nulls.to_owned(),
            "writing tombstones needs store.kafka.keys=true (a tombstone is written as its key)"
                .to_owned(),
        ));
    }
    let schedule = p.long(ROTATE_SCHEDULE_INTERVAL_MS_CONFIG).unwrap_or(-1);
    if schedule > 0 {
        let tz = p.string(TIMEZONE_CONFIG).unwrap_or("");
        if let Err(e) = Zone::parse(tz) {
            out.push((
                TIMEZONE_CONFIG,
                tz.to_owned(),
                format!("rotate.schedule.interval.ms needs a timezone: {e}"),
            ));
        }
    }
    out
}

type KeyError = (&'static str, String, String);

fn partitioner(p: &ParsedConfig) -> std::result::Result<Partitioner, KeyError> {
    let class = p
        .class(PARTITIONER_CLASS_CONFIG)
        .unwrap_or(DEFAULT_PARTITIONER);
    let (duration, pattern) = match class {
        DEFAULT_PARTITIONER => return Ok(Partitioner::Default),
        FIELD_PARTITIONER => {
            let fields = p.list(PARTITION_FIELD_NAME_CONFIG).to_vec();
            if fields.is_empty() {
                return Err((
                    PARTITION_FIELD_NAME_CONFIG,
                    String::new(),
                    "FieldPartitioner needs at least one field".to_owned(),
                ));
            }
            return Ok(Partitioner::Field {
                fields,
                delim: "/".to_owned(),
            });
        }
        DAILY_PARTITIONER => (86_400_000, "'year'=YYYY/'month'=MM/'day'=dd".to_owned()),
        HOURLY_PARTITIONER => (
            3_600_000,
            "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH".to_owned(),
        ),
        _ => {
            let d = p.long(PARTITION_DURATION_MS_CONFIG).unwrap_or(-1);
            if d < 0 {
                return Err((
                    PARTITION_DURATION_MS_CONFIG,
                    d.to_string(),
                    "Partition duration needs to be a positive.".to_owned(),
                ));
            }
            let f = p.string(PATH_FORMAT_CONFIG).unwrap_or("").to_owned();
            (d, f)
        }
    };
    let mut pattern = pattern;
    if pattern.trim().is_empty() || pattern == "/" {
        return Err((
            PATH_FORMAT_CONFIG,
            pattern,
            "Path format cannot be empty.".to_owned(),
        ));
    }
    if let Some(stripped) = pattern.strip_suffix('/') {
        pattern = stripped.to_owned();
    }
    if duration == 0 {
        return Err((
            PARTITION_DURATION_MS_CONFIG,
            "0".to_owned(),
            "Partition duration needs to be a positive.".to_owned(),
        ));
    }
    let format =
        JodaFormat::parse(&pattern).map_err(|e| (PATH_FORMAT_CONFIG, pattern.clone(), e))?;
    let locale = p.string(LOCALE_CONFIG).unwrap_or("").trim().to_owned();
    if locale.is_empty() {
        return Err((LOCALE_CONFIG, locale, "Locale cannot be empty.".to_owned()));
    }
    if format.has_text() && !locale.to_ascii_lowercase().starts_with("en") {
        return Err((
            LOCALE_CONFIG,
            locale,
            "path.format prints names (months, days, AM/PM), which this worker writes in English \
             only"
                .to_owned(),
        ));
    }
    let tz = p.string(TIMEZONE_CONFIG).unwrap_or("").trim().to_owned();
    if tz.is_empty() {
        return Err((TIMEZONE_CONFIG, tz, "Timezone cannot be empty.".to_owned()));
    }
    let zone = Zone::parse(&tz).map_err(|e| (TIMEZONE_CONFIG, tz.clone(), e))?;
    let extractor = match p.string(TIMESTAMP_EXTRACTOR_CONFIG).unwrap_or("Wallclock") {
        "Record" | RECORD_EXTRACTOR_CLASS => TimestampExtractor::Record,
        "RecordField" | RECORD_FIELD_EXTRACTOR_CLASS => TimestampExtractor::RecordField(
            p.string(TIMESTAMP_FIELD_CONFIG)
                .unwrap_or("timestamp")
                .to_owned(),
        ),
        _ => TimestampExtractor::Wallclock,
    };
    Ok(Partitioner::TimeBased {
        duration_ms: duration,
        format,
        zone,
        extractor,
    })
}

/// Validation: the keys one by one, then the checks between keys, each error on its key.
pub fn validate(props: &ConfigMap) -> Vec<ConfigValue> {
    let def = s3_config_def();
    let mut values = def.validate(props);
    if values.iter().all(|v| v.errors.is_empty())
        && let Ok(p) = def.parse(props)
    {
        for (key, value, reason) in cross_check(&p) {
            let msg = ConnectError::invalid_value(key, &value, &reason).to_string();
            if let Some(v) = values.iter_mut().find(|v| v.name == key) {
                v.errors.push(msg);
            }
        }
    }
    values
}

/// A `format.class` (or keys' / headers') with its keys.
fn format_of(p: &ParsedConfig, class: &str, data: &AvroDataConfig, part_size: usize) -> Format {
    let compression = match p.string(COMPRESSION_TYPE_CONFIG) {
        Some("gzip") => {
            let level = p.int(COMPRESSION_LEVEL_CONFIG).unwrap_or(-1);
            Compression::Gzip(u32::try_from(level).unwrap_or(6))
        }
        _ => Compression::None,
    };
    match class {
        BYTEARRAY_FORMAT => Format::ByteArray(ByteArrayOptions {
            extension: p
                .string(BYTEARRAY_EXTENSION_CONFIG)
                .unwrap_or(".bin")
                .to_owned(),
            separator: p
                .string(BYTEARRAY_SEPARATOR_CONFIG)
                .unwrap_or("\n")
                .as_bytes()
                .to_vec(),
            compression,
        }),
        AVRO_FORMAT => Format::Avro(AvroOptions {
            codec: AvroCodec::parse(p.string(AVRO_CODEC_CONFIG).unwrap_or("null"))
                .unwrap_or(AvroCodec::Null),
            data: data.clone(),
        }),
        PARQUET_FORMAT => Format::Parquet(ParquetOptions {
            codec: ParquetCodec::parse(p.string(PARQUET_CODEC_CONFIG).unwrap_or("snappy"))
                .unwrap_or(ParquetCodec::Snappy),
            data: data.clone(),
            row_group_bytes: part_size,
        }),
        _ => Format::Json(JsonOptions {
            extension: ".json".to_owned(),
            decimal_format: if p
                .string(JSON_DECIMAL_FORMAT_CONFIG)
                .is_some_and(|f| f.eq_ignore_ascii_case("NUMERIC"))
            {
                DecimalFormat::Numeric
            } else {
                DecimalFormat::Base64
            },
            compression,
        }),
    }
}

impl S3SinkConfig {
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = s3_config_def().parse(props)?;
        if let Some((key, value, reason)) = cross_check(&p).into_iter().next() {
            return Err(ConnectError::invalid_value(key, value, &reason));
        }
        let partitioner =
            partitioner(&p).map_err(|(k, v, r)| ConnectError::invalid_value(k, v, &r))?;
        let data = AvroDataConfig {
            enhanced_schema_support: p
                .boolean(ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG)
                .unwrap_or(true),
            connect_meta_data: p.boolean(CONNECT_META_DATA_CONFIG).unwrap_or(true),
            allow_optional_map_keys: p.boolean(ALLOW_OPTIONAL_MAP_KEYS_CONFIG).unwrap_or(false),
            ..AvroDataConfig::default()
        };
        let part_size = p
            .int(PART_SIZE_CONFIG)
            .and_then(|v| usize::try_from(v).ok())
            .unwrap_or(25 * 1024 * 1024);
        let format = format_of(
            &p,
            p.class(FORMAT_CLASS_CONFIG).unwrap_or(JSON_FORMAT),
            &data,
            part_size,
        );
        let stored = |on: &str, class: &str| {
            p.boolean(on)
                .unwrap_or(false)
                .then(|| format_of(&p, p.class(class).unwrap_or(AVRO_FORMAT), &data, part_size))
        };
        let keys = stored(STORE_KAFKA_KEYS_CONFIG, KEYS_FORMAT_CLASS_CONFIG);
        let headers = stored(STORE_KAFKA_HEADERS_CONFIG, HEADERS_FORMAT_CLASS_CONFIG);
        let rotate = p.long(ROTATE_INTERVAL_MS_CONFIG).filter(|v| *v > 0);
        let schedule = p
            .long(ROTATE_SCHEDULE_INTERVAL_MS_CONFIG)
            .filter(|v| *v > 0)
            .map(|ms| {
                (
                    ms,
                    Zone::parse(p.string(TIMEZONE_CONFIG).unwrap_or(""))
                        .unwrap_or_else(|_| Zone::utc()),
                )
            });
        let topics_dir = p.string(TOPICS_DIR_CONFIG).unwrap_or("topics");
        let nulls = match p.string(BEHAVIOR_ON_NULL_VALUES_CONFIG).unwrap_or("fail") {
            v if v.eq_ignore_ascii_case("ignore") => NullValues::Ignore {
                report: p.boolean("report.null.values.to.dlq").unwrap_or(true),
            },
            v if v.eq_ignore_ascii_case("write") => NullValues::Tombstones {
                partition: p
                    .string(TOMBSTONE_ENCODED_PARTITION_CONFIG)
                    .unwrap_or("tombstone")
                    .to_owned(),
            },
            _ => NullValues::Fail,
        };
        let settings = Settings {
            schema_affix: match p.string(SCHEMA_PARTITION_AFFIX_TYPE_CONFIG) {
                Some("PREFIX") => Some(SchemaAffix::Prefix),
                Some("SUFFIX") => Some(SchemaAffix::Suffix),
                _ => None,
            },
            topics_dir: topics_dir
                .split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            partitioner,
            format,
            keys,
            headers,
            flush_size: p
                .int(FLUSH_SIZE_CONFIG)
                .and_then(|v| usize::try_from(v).ok())
                .unwrap_or(1)
                .max(1),
            rotation: match rotate {
                Some(ms) => Rotation::Interval {
                    ms,
                    on_partition_change: p
                        .boolean(ROTATE_FILE_ON_PARTITION_CHANGE_CONFIG)
                        .unwrap_or(true),
                },
                None => Rotation::None,
            },
            schedule,
            zero_pad: p
                .int(FILENAME_OFFSET_ZERO_PAD_WIDTH_CONFIG)
                .and_then(|v| usize::try_from(v).ok())
                .unwrap_or(10),
            file_delim: p.string(FILE_DELIM_CONFIG).unwrap_or("+").to_owned(),
            nulls,
            part_size,
            rotate_on_schema_change: true,
            max_open_files: p
                .int(PARTITIONER_MAX_OPEN_FILES_CONFIG)
                .and_then(|n| usize::try_from(n).ok()),
            retry_backoff: p
                .long(RETRY_BACKOFF_CONFIG)
                .and_then(|v| u64::try_from(v).ok())
                .map(std::time::Duration::from_millis),
            // With its client, by `open`.
            tagging: None,
        };
        let tagging = if p.boolean(OBJECT_TAGGING_CONFIG).unwrap_or(false) {
            let pairs = tagging::parse_pairs(p.list(OBJECT_TAGGING_EXTRA_KV_CONFIG))
                .map_err(|e| ConnectError::invalid_value(OBJECT_TAGGING_EXTRA_KV_CONFIG, "", &e))?;
            let fail = p
                .string(BEHAVIOR_ON_TAGGING_ERROR_CONFIG)
                .is_some_and(|b| b.eq_ignore_ascii_case("fail"));
            Some((pairs, fail))
        } else {
            None
        };
        let endpoint = p
            .string(STORE_URL_CONFIG)
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim_end_matches('/').to_owned());
        Ok(Self {
            settings,
            bucket: p
                .string(S3_BUCKET_CONFIG)
                .ok_or_else(|| ConnectError::missing_required(S3_BUCKET_CONFIG))?
                .to_owned(),
            region: p.string(S3_REGION_CONFIG).unwrap_or("us-west-2").to_owned(),
            endpoint,
            access_key: p
                .string(AWS_ACCESS_KEY_ID_CONFIG)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            secret_key: p
                .password(AWS_SECRET_ACCESS_KEY_CONFIG)
                .map(|s| s.value().to_owned())
                .filter(|s| !s.is_empty()),
            path_style: p.boolean(PATH_STYLE_ACCESS_CONFIG).unwrap_or(true),
            retry: object_store::RetryConfig {
                backoff: object_store::BackoffConfig {
                    init_backoff: std::time::Duration::from_millis(
                        p.long(S3_RETRY_BACKOFF_CONFIG)
                            .and_then(|v| u64::try_from(v).ok())
                            .unwrap_or(200),
                    ),
                    max_backoff: std::time::Duration::from_secs(20),
                    base: 2.0,
                },
                max_retries: p
                    .int(PART_RETRIES_CONFIG)
                    .and_then(|v| usize::try_from(v).ok())
                    .unwrap_or(3),
                ..object_store::RetryConfig::default()
            },
            encryption: match p.string(SSEA_CONFIG).unwrap_or("") {
                "AES256" => match p
                    .password(SSE_CUSTOMER_KEY_CONFIG)
                    .map(|k| k.value().to_owned())
                    .filter(|k| !k.is_empty())
                {
                    Some(key) => Encryption::Customer(key),
                    None => Encryption::Aes256,
                },
                "aws:kms" => {
                    Encryption::Kms(p.string(SSE_KMS_KEY_ID_CONFIG).unwrap_or("").to_owned())
                }
                _ => Encryption::None,
            },
            tagging,
        })
    }

    /// The writers' settings and the bucket, with credentials from the keys or else the AWS
    /// default chain (environment, web identity, the shared credentials files' profile,
    /// container and instance metadata); with
    /// `s3.object.tagging`, the settings tag through the bucket's own endpoint and credentials.
    pub fn open(&self) -> Result<(Settings, Arc<dyn ObjectStore>)> {
        let mut b = AmazonS3Builder::from_env()
            .with_retry(self.retry.clone())
            .with_bucket_name(&self.bucket)
            .with_region(&self.region)
            .with_virtual_hosted_style_request(!self.path_style);
        if let Some(e) = &self.endpoint {
            b = b.with_endpoint(e).with_allow_http(e.starts_with("http://"));
        }
        if let (Some(k), Some(s)) = (&self.access_key, &self.secret_key) {
            b = b.with_access_key_id(k).with_secret_access_key(s);
        } else if b
            .get_config_value(&AmazonS3ConfigKey::AccessKeyId)
            .is_none()
            && b.get_config_value(&AmazonS3ConfigKey::WebIdentityTokenFile)
                .is_none()
            && let Some(p) = super::profile::from_env()
        {
            // The default chain's profile step, after the environment's keys and web identity,
            // before container and instance metadata.
            tracing::info!(profile = %p.profile, file = %p.file.display(), "S3 credentials from an AWS shared credentials profile");
            b = b
                .with_access_key_id(p.access_key_id)
                .with_secret_access_key(p.secret_access_key);
            if let Some(t) = p.session_token {
                b = b.with_token(t);
            }
        }
        b = match &self.encryption {
            Encryption::None => b,
            Encryption::Aes256 => b.with_config(
                "aws_server_side_encryption"
                    .parse::<AmazonS3ConfigKey>()
                    .expect("object_store's key"),
                "AES256",
            ),
            Encryption::Customer(key) => b.with_ssec_encryption(key),
            Encryption::Kms(key) => b.with_sse_kms_encryption(key),
        };
        let bucket_endpoint = bucket_endpoint(&b);
        let store = b.build().map_err(|e| {
            ConnectError::invalid_value(S3_BUCKET_CONFIG, &self.bucket, &e.to_string())
        })?;
        let mut settings = self.settings.clone();
        if let Some((extra, fail)) = &self.tagging {
            use object_store::client::{ClientOptions, HttpConnector, ReqwestConnector};
            let client = ReqwestConnector::default()
                .connect(&ClientOptions::new().with_allow_http(true))
                .map_err(|e| ConnectError::fatal(format!("S3 tagging client: {e}")))?;
            settings.tagging = Some(Tagging {
                extra: extra.clone(),
                fail: *fail,
                tagger: Arc::new(S3Tagger {
                    client,
                    credentials: store.credentials().clone(),
                    bucket_endpoint,
                    region: self.region.clone(),
                    retries: self.retry.max_retries,
                    backoff: self.retry.backoff.init_backoff,
                }),
            });
        }
        Ok((settings, Arc::new(store)))
    }
}

/// The bucket's URL as object_store's builder makes it (`<endpoint>/<bucket>` path-style, the
/// endpoint itself virtual-hosted, AWS's regional endpoints without one).
fn bucket_endpoint(b: &AmazonS3Builder) -> String {
    let get = |k| b.get_config_value(&k).unwrap_or_default();
    let (bucket, region) = (
        get(AmazonS3ConfigKey::Bucket),
        get(AmazonS3ConfigKey::Region),
    );
    let virtual_hosted = get(AmazonS3ConfigKey::VirtualHostedStyleRequest) == "true";
    match b.get_config_value(&AmazonS3ConfigKey::Endpoint) {
        Some(e) if virtual_hosted => e,
        Some(e) => format!("{}/{bucket}", e.trim_end_matches('/')),
        None if virtual_hosted => format!("https://{bucket}.s3.{region}.amazonaws.com"),
        None => format!("https://s3.{region}.amazonaws.com/{bucket}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BYTES_CLASS: &str = BYTEARRAY_FORMAT;

    fn props(extra: &[(&str, &str)]) -> ConfigMap {
        let mut m = ConfigMap::from([
            (S3_BUCKET_CONFIG.to_owned(), "b".to_owned()),
            (FORMAT_CLASS_CONFIG.to_owned(), JSON_FORMAT.to_owned()),
            (FLUSH_SIZE_CONFIG.to_owned(), "3".to_owned()),
        ]);
        for (k, v) in extra {
            m.insert((*k).to_owned(), (*v).to_owned());
        }
        m
    }

    fn errors(extra: &[(&str, &str)]) -> Vec<String> {
        validate(&props(extra))
            .into_iter()
            .flat_map(|v| v.errors)
            .collect()
    }

    #[test]
    fn server_side_encryption_keys() {
        for (ssea, extra, ok) in [
            ("AES256", None, true),
            ("AES256", Some((SSE_CUSTOMER_KEY_CONFIG, "a2V5")), true),
            ("aws:kms", Some((SSE_KMS_KEY_ID_CONFIG, "k")), true),
            ("aws:kms", None, false),
            ("", Some((SSE_KMS_KEY_ID_CONFIG, "k")), false),
            ("", Some((SSE_CUSTOMER_KEY_CONFIG, "a2V5")), false),
        ] {
            let mut kv = vec![(SSEA_CONFIG, ssea)];
            kv.extend(extra);
            let parsed = S3SinkConfig::parse(&props(&kv));
            assert_eq!(parsed.is_ok(), ok, "{kv:?}: {parsed:?}");
            if let Ok(c) = parsed {
                c.open().unwrap();
            }
        }
        assert!(errors(&[(PARTITIONER_MAX_OPEN_FILES_CONFIG, "0")]).len() == 1);
        let c = S3SinkConfig::parse(&props(&[(PARTITIONER_MAX_OPEN_FILES_CONFIG, "2")])).unwrap();
        assert_eq!(c.settings.max_open_files, Some(2));
    }

    #[test]
    fn every_key_is_defined_once() {
        let def = s3_config_def();
        let mut names: Vec<&str> = def.names().collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all);
    }

    #[test]
    fn confluent_defaults() {
        let c = S3SinkConfig::parse(&props(&[])).unwrap();
        assert_eq!(c.region, "us-west-2");
        assert_eq!(c.settings.topics_dir, vec!["topics".to_owned()]);
        assert_eq!(c.settings.zero_pad, 10);
        assert_eq!(c.settings.format.extension(), ".json");
        assert!(matches!(c.settings.partitioner, Partitioner::Default));
        assert!(matches!(c.settings.nulls, NullValues::Fail));
        assert!(errors(&[]).is_empty());
    }

    #[test]
    fn object_tagging_keys() {
        let ok = [
            (OBJECT_TAGGING_CONFIG, "true"),
            (OBJECT_TAGGING_EXTRA_KV_CONFIG, "team:data, env:test"),
            (BEHAVIOR_ON_TAGGING_ERROR_CONFIG, "FAIL"),
        ];
        assert!(errors(&ok).is_empty());
        let c = S3SinkConfig::parse(&props(&ok)).unwrap();
        let pairs = vec![
            ("team".to_owned(), "data".to_owned()),
            ("env".to_owned(), "test".to_owned()),
        ];
        assert_eq!(c.tagging, Some((pairs, true)));
        // The tagger comes with the store.
        assert!(c.settings.tagging.is_none());
        let (settings, _) = c.open().unwrap();
        assert!(settings.tagging.is_some_and(|t| t.fail));
        assert_eq!(S3SinkConfig::parse(&props(&[])).unwrap().tagging, None);
        let e = errors(&[(OBJECT_TAGGING_EXTRA_KV_CONFIG, "team")]);
        assert!(
            e.iter()
                .any(|m| m.contains(OBJECT_TAGGING_EXTRA_KV_CONFIG) && m.contains("key:value")),
            "{e:?}"
        );
        let e = errors(&[(BEHAVIOR_ON_TAGGING_ERROR_CONFIG, "retry")]);
        assert!(
            e.iter()
                .any(|m| m.contains(BEHAVIOR_ON_TAGGING_ERROR_CONFIG)),
            "{e:?}"
        );
    }

    #[test]
    fn an_unimplemented_key_is_an_error_naming_it_unless_default() {
        assert!(errors(&[("s3.acl.canned", ""), ("s3.wan.mode", "false")]).is_empty());
        let e = errors(&[("s3.acl.canned", "private")]);
        assert!(
            e.iter()
                .any(|m| m.contains("s3.acl.canned") && m.contains("not implemented")),
            "{e:?}"
        );
        let e = errors(&[
            ("s3.compression.type", "gzip"),
            (FORMAT_CLASS_CONFIG, AVRO_FORMAT),
        ]);
        assert!(e.iter().any(|m| m.contains("s3.compression.type")), "{e:?}");
        let c = S3SinkConfig::parse(&props(&[("s3.compression.type", "gzip")])).unwrap();
        assert_eq!(c.settings.format.extension(), ".json.gz");
        let e = errors(&[
            ("store.kafka.headers", "true"),
            ("headers.format.class", BYTES_CLASS),
        ]);
        assert!(
            e.iter().any(|m| m.contains("headers.format.class")),
            "{e:?}"
        );
        let c = S3SinkConfig::parse(&props(&[("store.kafka.keys", "true")])).unwrap();
        assert_eq!(
            c.settings.keys.map(|f| f.extension()),
            Some(".avro".to_owned())
        );
        assert!(S3SinkConfig::parse(&props(&[("s3.sse.kms.key.id", "k")])).is_err());
        let e = errors(&[("avro.codec", "bzip2")]);
        assert!(e.iter().any(|m| m.contains("avro.codec")), "{e:?}");
    }

    #[test]
    fn partitioner_keys_are_checked() {
        let e = errors(&[(PARTITIONER_CLASS_CONFIG, TIME_BASED_PARTITIONER)]);
        assert!(
            e.iter().any(|m| m.contains("partition.duration.ms")),
            "{e:?}"
        );
        let e = errors(&[(PARTITIONER_CLASS_CONFIG, DAILY_PARTITIONER)]);
        assert!(e.iter().any(|m| m.contains("locale")), "{e:?}");
        let ok = [
            (PARTITIONER_CLASS_CONFIG, DAILY_PARTITIONER),
            (LOCALE_CONFIG, "en-US"),
            (TIMEZONE_CONFIG, "UTC"),
            (TIMESTAMP_EXTRACTOR_CONFIG, RECORD_EXTRACTOR_CLASS),
        ];
        let c = S3SinkConfig::parse(&props(&ok)).unwrap();
        assert_eq!(
            c.settings.partitioner.extractor(),
            Some(&TimestampExtractor::Record)
        );
        assert!(errors(&ok).is_empty(), "{:?}", errors(&ok));
        let e = errors(&[(ROTATE_INTERVAL_MS_CONFIG, "1000")]);
        assert!(e.iter().any(|m| m.contains("rotate.interval.ms")), "{e:?}");
        let e = errors(&[
            (PARTITIONER_CLASS_CONFIG, TIME_BASED_PARTITIONER),
            (PARTITION_DURATION_MS_CONFIG, "60000"),
            (PATH_FORMAT_CONFIG, "yyyy/ww"),
            (LOCALE_CONFIG, "en"),
            (TIMEZONE_CONFIG, "UTC"),
        ]);
        assert!(e.iter().any(|m| m.contains("path.format")), "{e:?}");
        let e = errors(&[(PARTITIONER_CLASS_CONFIG, FIELD_PARTITIONER)]);
        assert!(
            e.iter().any(|m| m.contains("partition.field.name")),
            "{e:?}"
        );
    }
}
