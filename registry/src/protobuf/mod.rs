//! Protobuf in the registry wire format, as Confluent's `io.confluent.connect.protobuf.ProtobufConverter`
//! writes and reads it: the Connect → `.proto` mapping and its canonical text ([`schema`]), the
//! `.proto` → Connect mapping and the values both ways ([`data`]), compiling registry texts to
//! descriptors ([`compile`]) and the converter ([`converter`]).
//!
//! # Wire format
//!
//! Magic byte 0, the schema id (4 bytes, big-endian), the *message indexes* (which message of
//! the schema's file the bytes are: the path of indexes among the message types of the file and
//! then of the nested types, as a count and the indexes, each a zigzag varint; the first message,
//! `[0]`, is written as the single byte 0), then the protobuf encoding of the message.
//!
//! # Connect schema → `.proto` (Confluent's `ProtobufData.fromConnectSchema`)
//!
//! The rules implemented, as read in Confluent's `ProtobufData`, `DynamicSchema` and
//! `ProtobufSchema`/`ProtobufSchemaUtils` (the canonical text the serializer registers), and
//! checked against Java's own texts and message bytes by `registry/tests/protobuf_golden.rs`
//! (`tests/golden/registry/protobuf-data.jsonl`, from `tests/registry/capture-protobuf-golden.sh`):
//!
//! * The file is `syntax = "proto3";`, with `package <namespace>;` when the root schema's name
//!   has dots (the part before the last dot; each part scrubbed with `scrub.invalid.names`).
//! * A STRUCT root is one top-level message named after the last part of the schema name, or
//!   `ConnectDefault1` when unnamed; every unnamed STRUCT or MAP below it takes the next
//!   `ConnectDefault<n>` (a depth-first count over the fields, the root being 1).
//! * A primitive root is the matching wrapper message of `google/protobuf/wrappers.proto`
//!   (INT8/INT16/INT32 → `Int32Value`, INT64 → `Int64Value`, FLOAT32 → `FloatValue`, FLOAT64 →
//!   `DoubleValue`, BOOLEAN → `BoolValue`, STRING → `StringValue`, BYTES → `BytesValue`), and
//!   the registered text is that whole file as Java prints it from protobuf-java's descriptor
//!   (each field with `[json_name = "value"]`); ARRAY and MAP roots are refused.
//! * Field numbers: the `io.confluent.connect.protobuf.Tag` parameter of the field schema, else
//!   1, 2, 3… counting only the fields without one. Field names are the Connect names.
//! * Types: INT8, INT16 → `int32` with `[(confluent.field_meta) = { params: [{ key:
//!   "connect.type", value: "int8" }] }]` (`int16`); INT32 → `int32`, or the
//!   `io.confluent.connect.protobuf.Type` parameter (`sint32`, `sfixed32`); INT64 → `int64` or
//!   that parameter (`uint32`, `fixed32`, `uint64`, `sint64`, `fixed64`, `sfixed64`); FLOAT32 →
//!   `float`; FLOAT64 → `double`; BOOLEAN → `bool`; STRING → `string`; BYTES → `bytes`.
//! * With `wrapper.for.nullables`, an optional primitive field is the wrapper message instead
//!   (`google.protobuf.Int32Value`… ; `UInt32Value` for uint32/fixed32, `UInt64Value` for
//!   uint64/fixed64), importing `google/protobuf/wrappers.proto`.
//! * With `optional.for.nullables`, an optional non-repeated field is labelled `optional`
//!   (proto3 presence); ARRAY and MAP fields are `repeated`.
//! * ARRAY → `repeated <element type>`; an array of arrays is refused.
//! * MAP → `repeated <Name>Entry` with a nested message `<Name>Entry { <key> key = 1; <value>
//!   value = 2; }` (no `map_entry` option: a plain repeated message, as Java builds it); the name
//!   is the map schema's last name part (or `ConnectDefault<n>`), in UpperCamel when it has
//!   underscores.
//! * STRUCT → a nested message named after the schema's last name part (or
//!   `ConnectDefault<n>`), `Message` appended when that equals the field name; a message of the
//!   same name already nested in the parent (or the parent itself) is not defined again.
//! * Logical types: Decimal → `confluent.type.Decimal` with `[(confluent.field_meta) = {
//!   params: [{ value: "<precision>", key: "precision" }, { value: "<scale>", key: "scale" }]
//!   }]` (precision from `connect.decimal.precision` when set; value before key, as Java prints
//!   those two); Date → `google.type.Date`; Time → `google.type.TimeOfDay`; Timestamp →
//!   `google.protobuf.Timestamp`, each importing its file.
//! * Enums (a schema with the `io.confluent.connect.protobuf.Enum` parameter, as read back from
//!   Protobuf): an `enum` nested in the message, its values from the
//!   `io.confluent.connect.protobuf.Enum.<SYMBOL>` parameters in order.
//! * Unions (a STRUCT named `io.confluent.connect.protobuf.Union.<name>`): a `oneof <name>`
//!   whose members are the union's fields, each numbered by its `Tag` parameter (required).
//! * Defaults and docs are not written (proto3 has neither; Java's text drops them too).
//! * Imports are listed in the order first needed, once each; `(confluent.field_meta)` options
//!   are printed without importing `confluent/meta.proto`, exactly as Java's text has them.
//! * Printing (`ProtobufSchemaUtils.toString`): `syntax`, `package`, a blank line and the
//!   imports, a blank line and the messages; in a message: fields (the `optional` ones included,
//!   in declaration order), then a blank line and the `oneof`s, then a blank line and the nested
//!   messages followed by the nested enums; two spaces of indent a level; `message X {}` when
//!   empty.
//!
//! The message indexes of such a schema are always `[0]` (a wrapper root: its index in
//! `wrappers.proto`).
//!
//! # `.proto` → Connect schema (`ProtobufData.toConnectSchema`)
//!
//! In [`data`]: the message's real `oneof`s first (a STRUCT field `<oneof>_<index>` named
//! `io.confluent.connect.protobuf.Union.<oneof>`, or each member flattened with
//! `flatten.unions`), then its other fields; every field schema carries its number in the `Tag`
//! parameter; scalar fields are optional unless `wrapper.for.nullables` or
//! `optional.for.nullables` (then only `optional` ones); messages, enums and repeated fields are
//! always optional; array elements are optional.

pub mod compile;
pub mod converter;
pub mod data;
pub mod data_config;
pub mod schema;

#[cfg(test)]
mod tests;
