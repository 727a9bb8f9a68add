//! `ProtobufDataConfig`'s settings, read by both directions of the mapping ([`super::schema`]
//! writing schemas, [`super::data`] converting values).

/// `ProtobufDataConfig` (and the `schemas.cache.config` of `AbstractDataConfig`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtobufDataConfig {
    pub enhanced_schema_support: bool,
    pub scrub_invalid_names: bool,
    pub int_for_enums: bool,
    pub optional_for_nullables: bool,
    pub optional_for_proto2: bool,
    pub wrapper_for_nullables: bool,
    pub wrapper_for_raw_primitives: bool,
    pub generate_struct_for_nulls: bool,
    pub generate_index_for_unions: bool,
    pub flatten_unions: bool,
}

impl Default for ProtobufDataConfig {
    fn default() -> Self {
        ProtobufDataConfig {
            enhanced_schema_support: false,
            scrub_invalid_names: false,
            int_for_enums: false,
            optional_for_nullables: false,
            optional_for_proto2: true,
            wrapper_for_nullables: false,
            wrapper_for_raw_primitives: true,
            generate_struct_for_nulls: false,
            generate_index_for_unions: true,
            flatten_unions: false,
        }
    }
}
