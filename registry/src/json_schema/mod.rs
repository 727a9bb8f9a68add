//! JSON Schema in the registry wire format, as Confluent's `JsonSchemaConverter`: the JSON
//! nodes and their writing as Jackson does it ([`json`]), the schema model, its registered text
//! and the loader of registered texts ([`schema`]), Confluent's Connect mapping ([`data`]) and the
//! converter ([`converter`]).

pub mod converter;
pub mod data;
pub mod json;
pub mod schema;
