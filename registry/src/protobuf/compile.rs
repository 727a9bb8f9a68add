//! `.proto` text → descriptors (protox), with the imports Confluent's schemas use resolved
//! here: the well-known `google/protobuf/*.proto` (shipped with protox), `google/type/date.proto`,
//! `google/type/timeofday.proto`, `confluent/meta.proto` and `confluent/type/decimal.proto`
//! (their message definitions written out below: package, names and field numbers as in
//! Google's and Confluent's files, which Confluent's serializer never registers as references).
//!
//! Confluent's texts use `(confluent.field_meta)` options without importing
//! `confluent/meta.proto` (Java's parser does not resolve options); the import is added before
//! compiling so the option's value can be read.
//!
//! And the message indexes of the wire format.

use connect_api::{ConnectError, Result};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};
use protox::prost_reflect::{DescriptorPool, MessageDescriptor};

/// The name the registry's text is compiled under (not one of the known files).
pub const MAIN_FILE: &str = "connect-registry-schema.proto";
pub const META_LOCATION: &str = "confluent/meta.proto";

const META_PROTO: &str = r#"syntax = "proto3";
package confluent;
import "google/protobuf/descriptor.proto";
message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
  repeated Rule rules = 4;
}
message Rule {
  string name = 1;
  string doc = 2;
  string expr = 3;
  string sql = 4;
}
extend google.protobuf.FileOptions { Meta file_meta = 1088; }
extend google.protobuf.MessageOptions { Meta message_meta = 1088; }
extend google.protobuf.FieldOptions { Meta field_meta = 1088; }
extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }
extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }
"#;

const DECIMAL_PROTO: &str = r#"syntax = "proto3";
package confluent.type;
message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
"#;

const DATE_PROTO: &str = r#"syntax = "proto3";
package google.type;
message Date {
  int32 year = 1;
  int32 month = 2;
  int32 day = 3;
}
"#;

const TIME_OF_DAY_PROTO: &str = r#"syntax = "proto3";
package google.type;
message TimeOfDay {
  int32 hours = 1;
  int32 minutes = 2;
  int32 seconds = 3;
  int32 nanos = 4;
}
"#;

/// Serves the registry's text and the known files Confluent's schemas import.
struct Known {
    main: Option<File>,
}

impl FileResolver for Known {
    fn open_file(&self, name: &str) -> std::result::Result<File, protox::Error> {
        let text = match name {
            MAIN_FILE => {
                return self
                    .main
                    .clone()
                    .ok_or_else(|| protox::Error::file_not_found(name));
            }
            META_LOCATION => META_PROTO,
            super::schema::DECIMAL_LOCATION => DECIMAL_PROTO,
            super::schema::DATE_LOCATION => DATE_PROTO,
            super::schema::TIME_LOCATION => TIME_OF_DAY_PROTO,
            _ => return Err(protox::Error::file_not_found(name)),
        };
        File::from_source(name, text)
    }
}

/// Whether `name` is a file this module resolves itself.
pub fn is_known_import(name: &str) -> bool {
    matches!(
        name,
        META_LOCATION
            | super::schema::DECIMAL_LOCATION
            | super::schema::DATE_LOCATION
            | super::schema::TIME_LOCATION
    ) || GoogleFileResolver::new().open_file(name).is_ok()
}

/// A compiled registry schema: the pool and the names of its file's messages.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub pool: DescriptorPool,
    /// The file's package ("" when none).
    pub package: String,
}

impl Compiled {
    /// The message the indexes name (Confluent's `ProtobufSchema.toMessageName`).
    pub fn message_at(&self, indexes: &[i32]) -> Result<MessageDescriptor> {
        let file = self
            .pool
            .get_file_by_name(MAIN_FILE)
            .ok_or_else(|| ConnectError::data("compiled schema without its file"))?;
        let bad = || ConnectError::data(format!("Invalid message indexes: {indexes:?}"));
        let indexes: &[i32] = if indexes.is_empty() { &[0] } else { indexes };
        let mut current: Option<MessageDescriptor> = None;
        for &i in indexes {
            let i = usize::try_from(i).map_err(|_| bad())?;
            let next = match &current {
                None => file.messages().nth(i),
                Some(m) => m.child_messages().nth(i),
            };
            current = Some(next.ok_or_else(bad)?);
        }
        current.ok_or_else(bad)
    }

    /// The message of that full name.
    pub fn message(&self, full_name: &str) -> Result<MessageDescriptor> {
        self.pool.get_message_by_name(full_name).ok_or_else(|| {
            ConnectError::data(format!("The compiled schema has no message {full_name}"))
        })
    }
}

/// Compiles a registry text. Imports other than the known files are refused (schema
/// references are not supported).
pub fn compile(text: &str) -> Result<Compiled> {
    let invalid = |e: protox::Error| ConnectError::data(format!("Invalid Protobuf schema: {e}"));
    let parsed = File::from_source(MAIN_FILE, text).map_err(invalid)?;
    let mut proto = parsed.file_descriptor_proto().clone();
    for dep in &proto.dependency {
        if !is_known_import(dep) {
            return Err(ConnectError::data(format!(
                "The Protobuf schema imports {dep}: schema references are not supported by this worker's ProtobufConverter"
            )));
        }
    }
    if text.contains("(confluent.") && !proto.dependency.iter().any(|d| d == META_LOCATION) {
        proto.dependency.push(META_LOCATION.to_owned());
    }
    let package = proto.package().to_owned();
    let mut chain = ChainFileResolver::new();
    chain.add(Known {
        main: Some(File::from_file_descriptor_proto(proto)),
    });
    chain.add(GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(chain);
    compiler.open_file(MAIN_FILE).map_err(invalid)?;
    Ok(Compiled {
        pool: compiler.descriptor_pool(),
        package,
    })
}

/// Writes the message indexes (Confluent's `MessageIndexes.toByteArray`: `[0]` as one 0 byte,
/// else the count and the indexes, zigzag varints).
pub fn write_indexes(out: &mut Vec<u8>, indexes: &[i32]) {
    if indexes == [0] || indexes.is_empty() {
        out.push(0);
        return;
    }
    write_varint(out, indexes.len() as i32);
    for &i in indexes {
        write_varint(out, i);
    }
}

fn write_varint(out: &mut Vec<u8>, v: i32) {
    let mut z = ((v << 1) ^ (v >> 31)) as u32;
    while z >= 0x80 {
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn read_varint(bytes: &[u8], pos: &mut usize) -> Result<i32> {
    let mut z: u32 = 0;
    for shift in (0..35).step_by(7) {
        let b = *bytes
            .get(*pos)
            .ok_or_else(|| ConnectError::data("Truncated message indexes"))?;
        *pos += 1;
        z |= u32::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(((z >> 1) as i32) ^ -((z & 1) as i32));
        }
    }
    Err(ConnectError::data("Invalid varint in the message indexes"))
}

/// Reads the message indexes; the indexes and the protobuf bytes after them.
pub fn read_indexes(bytes: &[u8]) -> Result<(Vec<i32>, &[u8])> {
    let mut pos = 0;
    let count = read_varint(bytes, &mut pos)?;
    if count == 0 {
        return Ok((vec![0], &bytes[pos..]));
    }
    if count < 0 || count as usize > bytes.len() {
        return Err(ConnectError::data(format!(
            "Invalid message index count {count}"
        )));
    }
    let mut indexes = Vec::with_capacity(count as usize);
    for _ in 0..count {
        indexes.push(read_varint(bytes, &mut pos)?);
    }
    Ok((indexes, &bytes[pos..]))
}

/// The message indexes of `message` in its file (Confluent's `toMessageIndexes`).
pub fn indexes_of(message: &MessageDescriptor) -> Vec<i32> {
    let mut path = Vec::new();
    let mut current = Some(message.clone());
    while let Some(m) = current {
        let parent = m.parent_message();
        let siblings: Vec<MessageDescriptor> = match &parent {
            Some(p) => p.child_messages().collect(),
            None => m.parent_file().messages().collect(),
        };
        let i = siblings
            .iter()
            .position(|s| s.full_name() == m.full_name())
            .unwrap_or(0);
        path.push(i as i32);
        current = parent;
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_indexes_round_trip_as_confluent_writes_them() {
        let mut out = Vec::new();
        write_indexes(&mut out, &[0]);
        assert_eq!(out, [0]);
        let (ix, rest) = read_indexes(&[0, 9]).unwrap();
        assert_eq!((ix, rest), (vec![0], &[9u8][..]));
        let mut out = Vec::new();
        write_indexes(&mut out, &[1, 0, 70]);
        // count 3 → 6; 1 → 2; 0 → 0; 70 → 140 = 0x8c 0x01.
        assert_eq!(out, [6, 2, 0, 0x8c, 0x01]);
        out.push(42);
        let (ix, rest) = read_indexes(&out).unwrap();
        assert_eq!((ix, rest), (vec![1, 0, 70], &[42u8][..]));
        assert!(read_indexes(&[0x80]).is_err());
    }

    #[test]
    fn compiles_texts_with_confluent_options_and_finds_messages_by_index() {
        let text = "syntax = \"proto3\";\npackage a.b;\n\nimport \"google/protobuf/timestamp.proto\";\n\nmessage M {\n  int32 x = 1 [(confluent.field_meta) = {\n    params: [\n      {\n        key: \"connect.type\",\n        value: \"int8\"\n      }\n    ]\n  }];\n  google.protobuf.Timestamp t = 2;\n\n  message Inner {\n    string s = 1;\n  }\n}\nmessage N {\n}\n";
        let c = compile(text).unwrap();
        assert_eq!(c.package, "a.b");
        assert_eq!(c.message_at(&[0]).unwrap().full_name(), "a.b.M");
        assert_eq!(c.message_at(&[1]).unwrap().full_name(), "a.b.N");
        assert_eq!(c.message_at(&[0, 0]).unwrap().full_name(), "a.b.M.Inner");
        assert!(c.message_at(&[2]).is_err());
        assert_eq!(indexes_of(&c.message("a.b.M.Inner").unwrap()), [0, 0]);
        assert_eq!(indexes_of(&c.message("a.b.N").unwrap()), [1]);
        let e =
            compile("syntax = \"proto3\";\nimport \"other.proto\";\nmessage M {}\n").unwrap_err();
        assert!(e.to_string().contains("other.proto"), "{e}");
    }
}
