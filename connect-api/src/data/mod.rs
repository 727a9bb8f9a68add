//! Connect's data model: [`Schema`], [`Value`], [`Struct`] and the logical types.
//!
//! Values are kept in their *physical* form (a Decimal is its unscaled two's-complement bytes,
//! a Date is days since the epoch...) so that converters round-trip them exactly; the
//! [`logical`] module converts to and from friendlier forms.

pub mod logical;
mod schema;
mod value;

pub use schema::{Field, Schema, SchemaBuilder, SchemaType};
pub use value::{SchemaAndValue, Struct, Value};
