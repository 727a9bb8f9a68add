//! Converters that keep schemas in a Schema Registry and write the registry wire format
//! (magic byte 0, 4-byte schema id, payload), under the class names users configure:
//! `io.confluent.connect.avro.AvroConverter`, `io.confluent.connect.protobuf.ProtobufConverter`
//! ([`protobuf`]), `io.confluent.connect.json.JsonSchemaConverter` ([`json_schema`]), and
//! Apicurio's `io.apicurio.registry.utils.converter.AvroConverter` with Apicurio's keys
//! ([`apicurio`]), its `ProtobufConverter` (Apicurio's own format and mapping:
//! [`apicurio::protobuf`]) and its `ExtJsonConverter` ([`ext_json`]).
//!
//! ```text
//!   lib (plugins, install) ─▶ avro::converter ─▶ avro::{data, codec, compat, schema}
//!                        │         │
//!                        │         └▶ config ─▶ client (HTTP, caches), subject, wire
//!                        ├▶ json_schema::converter ─▶ json_schema::{data, schema, json}
//!                        │         └▶ config ─▶ client, subject, wire
//!                        └▶ apicurio::protobuf ─▶ apicurio::{protobuf_data, (keys)},
//!                                  protobuf::compile, config ─▶ client, wire
//! ```
//!
//! The worker installs them into `connect_api`'s converter lookup at start-up ([`install`]),
//! so they are found wherever a converter class is: worker and connector `key.converter` /
//! `value.converter`, validation, `GET /connector-plugins?connectorsOnly=false`.

pub mod apicurio;
pub mod avro;
pub mod client;
pub mod config;
pub mod ext_json;
pub mod json_schema;
pub mod protobuf;
pub mod subject;
pub mod tls;
pub mod wire;

use connect_api::converter::ConverterPlugin;

/// Every converter of this crate.
pub fn converter_plugins() -> Vec<ConverterPlugin> {
    vec![
        ConverterPlugin {
            class: avro::converter::CONFLUENT_AVRO_CONVERTER,
            new: || Box::new(avro::converter::AvroConverter::default()),
        },
        ConverterPlugin {
            class: apicurio::APICURIO_AVRO_CONVERTER,
            new: || Box::new(avro::converter::AvroConverter::apicurio()),
        },
        ConverterPlugin {
            class: ext_json::APICURIO_EXT_JSON_CONVERTER,
            new: || Box::new(ext_json::ExtJsonConverter::default()),
        },
        ConverterPlugin {
            class: apicurio::APICURIO_PROTOBUF_CONVERTER,
            new: || Box::new(apicurio::protobuf::ApicurioProtobufConverter::default()),
        },
        ConverterPlugin {
            class: protobuf::converter::CONFLUENT_PROTOBUF_CONVERTER,
            new: || Box::new(protobuf::converter::ProtobufConverter::default()),
        },
        ConverterPlugin {
            class: json_schema::converter::CONFLUENT_JSON_SCHEMA_CONVERTER,
            new: || Box::new(json_schema::converter::JsonSchemaConverter::default()),
        },
    ]
}

/// Adds this crate's converters to `connect_api`'s lookup (once per process; later calls are
/// no-ops).
pub fn install() {
    connect_api::converter::install_converter_plugins(converter_plugins());
}
