//! Avro in the registry wire format: the schema model ([`schema`]), Confluent's Connect mapping
//! ([`data`]), the binary encoding ([`codec`]) and the converter ([`converter`]).

pub mod codec;
pub mod compat;
pub mod converter;
pub mod data;
pub mod schema;
