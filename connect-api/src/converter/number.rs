//! Apache's primitive converters (`org.apache.kafka.connect.converters.*`): `ShortConverter`,
//! `IntegerConverter`, `LongConverter`, `FloatConverter`, `DoubleConverter` and
//! `BooleanConverter`. The bytes are those of Kafka's serializers (big-endian two's complement,
//! IEEE 754 bits, one byte `0`/`1` for booleans); null is Kafka's null both ways; reading always
//! gives the optional schema of the type. Each is a key, value and header converter.

use super::simple::header_via_converter;
use super::{Converter, HeaderConverter};
use crate::config::ConfigMap;
use crate::data::{Schema, SchemaAndValue, SchemaType, Value};
use crate::error::{ConnectError, Result};

pub const SHORT_CONVERTER_CLASS: &str = "org.apache.kafka.connect.converters.ShortConverter";
pub const INTEGER_CONVERTER_CLASS: &str = "org.apache.kafka.connect.converters.IntegerConverter";
pub const LONG_CONVERTER_CLASS: &str = "org.apache.kafka.connect.converters.LongConverter";
pub const FLOAT_CONVERTER_CLASS: &str = "org.apache.kafka.connect.converters.FloatConverter";
pub const DOUBLE_CONVERTER_CLASS: &str = "org.apache.kafka.connect.converters.DoubleConverter";
pub const BOOLEAN_CONVERTER_CLASS: &str = "org.apache.kafka.connect.converters.BooleanConverter";

/// The Java class of a Connect value, as `value.getClass()` prints it in Apache's messages.
fn java_class(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Int8(_) => "class java.lang.Byte",
        Value::Int16(_) => "class java.lang.Short",
        Value::Int32(_) => "class java.lang.Integer",
        Value::Int64(_) => "class java.lang.Long",
        Value::Float32(_) => "class java.lang.Float",
        Value::Float64(_) => "class java.lang.Double",
        Value::Boolean(_) => "class java.lang.Boolean",
        Value::String(_) => "class java.lang.String",
        Value::Bytes(_) => "class [B",
        Value::Array(_) => "class java.util.ArrayList",
        Value::Map(_) => "class java.util.HashMap",
        Value::Struct(_) => "class org.apache.kafka.connect.data.Struct",
    }
}

/// Which number a [`NumberConverter`] reads and writes (Java's `NumberConverter` subclasses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberType {
    Short,
    Integer,
    Long,
    Float,
    Double,
}

impl NumberType {
    /// The name in Apache's messages (`"Failed to serialize to integer ..."`).
    fn type_name(self) -> &'static str {
        match self {
            Self::Short => "short",
            Self::Integer => "integer",
            Self::Long => "long",
            Self::Float => "float",
            Self::Double => "double",
        }
    }

    fn width(self) -> usize {
        match self {
            Self::Short => 2,
            Self::Integer | Self::Float => 4,
            Self::Long | Self::Double => 8,
        }
    }

    /// Kafka's deserializer names in their size errors (the float and double ones say
    /// just `Deserializer`).
    fn deserializer(self) -> &'static str {
        match self {
            Self::Short => "ShortDeserializer",
            Self::Integer => "IntegerDeserializer",
            Self::Long => "LongDeserializer",
            Self::Float | Self::Double => "Deserializer",
        }
    }

    fn schema(self) -> Schema {
        match self {
            Self::Short => Schema::optional_int16(),
            Self::Integer => Schema::optional_int32(),
            Self::Long => Schema::optional_int64(),
            Self::Float => Schema::optional_float32(),
            Self::Double => Schema::optional_float64(),
        }
    }
}

/// Java's `NumberConverter`: the value must be exactly the converter's Java type (no schema
/// check, no widening: an `INT16` value given to `IntegerConverter` is a `ClassCastException`
/// in Java, a data error here).
#[derive(Debug, Clone, Copy)]
pub struct NumberConverter {
    kind: NumberType,
}

impl NumberConverter {
    pub fn new(kind: NumberType) -> Self {
        Self { kind }
    }

    pub fn serialize(&self, value: &Value) -> Result<Option<Vec<u8>>> {
        Ok(Some(match (self.kind, value) {
            (_, Value::Null) => return Ok(None),
            (NumberType::Short, Value::Int16(v)) => v.to_be_bytes().to_vec(),
            (NumberType::Integer, Value::Int32(v)) => v.to_be_bytes().to_vec(),
            (NumberType::Long, Value::Int64(v)) => v.to_be_bytes().to_vec(),
            (NumberType::Float, Value::Float32(v)) => v.to_bits().to_be_bytes().to_vec(),
            (NumberType::Double, Value::Float64(v)) => v.to_bits().to_be_bytes().to_vec(),
            (kind, other) => {
                return Err(ConnectError::data(format!(
                    "Failed to serialize to {} (was {}): ",
                    kind.type_name(),
                    java_class(other)
                )));
            }
        }))
    }

    pub fn deserialize(&self, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
        let schema = Some(self.kind.schema());
        let Some(b) = bytes else {
            return Ok(SchemaAndValue::new(schema, Value::Null));
        };
        if b.len() != self.kind.width() {
            return Err(ConnectError::data(format!(
                "Failed to deserialize {}: ",
                self.kind.type_name()
            ))
            .with_source(format!(
                "Size of data received by {} is not {}",
                self.kind.deserializer(),
                self.kind.width()
            )));
        }
        let value = match self.kind {
            NumberType::Short => Value::Int16(i16::from_be_bytes([b[0], b[1]])),
            NumberType::Integer => Value::Int32(i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            NumberType::Float => {
                Value::Float32(f32::from_bits(u32::from_be_bytes([b[0], b[1], b[2], b[3]])))
            }
            NumberType::Long => Value::Int64(i64::from_be_bytes(eight(b))),
            NumberType::Double => Value::Float64(f64::from_bits(u64::from_be_bytes(eight(b)))),
        };
        Ok(SchemaAndValue::new(schema, value))
    }
}

fn eight(b: &[u8]) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    a
}

impl Converter for NumberConverter {
    fn configure(&mut self, _config: &ConfigMap, _is_key: bool) -> Result<()> {
        Ok(())
    }
    fn from_connect_data(
        &self,
        _topic: &str,
        _schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        self.serialize(value)
    }
    fn to_connect_data(&self, _topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
        self.deserialize(bytes)
    }
}

/// Java's `BooleanConverter`: a `BOOLEAN` schema (or none), one byte, `1` true and `0` false.
#[derive(Debug, Clone, Copy, Default)]
pub struct BooleanConverter;

impl Converter for BooleanConverter {
    fn configure(&mut self, _config: &ConfigMap, _is_key: bool) -> Result<()> {
        Ok(())
    }
    fn from_connect_data(
        &self,
        _topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        if let Some(s) = schema.filter(|s| s.schema_type() != SchemaType::Boolean) {
            return Err(ConnectError::data(format!(
                "Invalid schema type for BooleanConverter: {}",
                s.schema_type()
            )));
        }
        match value {
            Value::Null => Ok(None),
            Value::Boolean(b) => Ok(Some(vec![u8::from(*b)])),
            other => Err(ConnectError::data(format!(
                "BooleanConverter is not compatible with objects of type {}",
                java_class(other)
            ))),
        }
    }
    fn to_connect_data(&self, _topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
        let schema = Some(Schema::optional_boolean());
        let value = match bytes {
            None => Value::Null,
            Some([1]) => Value::Boolean(true),
            Some([0]) => Value::Boolean(false),
            Some(b) => {
                let cause = if b.len() == 1 {
                    // Java prints the byte signed.
                    format!(
                        "Unexpected byte received by BooleanDeserializer: {}",
                        b[0] as i8
                    )
                } else {
                    "Size of data received by BooleanDeserializer is not 1".to_owned()
                };
                return Err(
                    ConnectError::data("Failed to deserialize boolean: ").with_source(cause)
                );
            }
        };
        Ok(SchemaAndValue::new(schema, value))
    }
}

header_via_converter!(NumberConverter, BooleanConverter);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::converter::{converter_for_class, header_converter_for_class};

    /// Apache 4.4's answers for the same inputs, written by `tests/apache/NumberConvertersGolden.java`
    /// (the command is in its header).
    const GOLDEN: &str = include_str!("number_golden.tsv");

    fn unhex(h: &str) -> Option<Vec<u8>> {
        (h != "null").then(|| {
            (0..h.len() / 2)
                .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
                .collect()
        })
    }

    fn hex(b: Option<&[u8]>) -> String {
        b.map_or("null".into(), |b| {
            b.iter().map(|x| format!("{x:02x}")).collect()
        })
    }

    fn value(text: &str) -> Value {
        if text == "null" {
            return Value::Null;
        }
        let (tag, v) = text.split_once(':').unwrap();
        match tag {
            "short" => Value::Int16(v.parse().unwrap()),
            "int" => Value::Int32(v.parse().unwrap()),
            "long" => Value::Int64(v.parse().unwrap()),
            "float" => Value::Float32(f32::from_bits(u32::from_str_radix(v, 16).unwrap())),
            "double" => Value::Float64(f64::from_bits(u64::from_str_radix(v, 16).unwrap())),
            "boolean" => Value::Boolean(v.parse().unwrap()),
            "string" => Value::String(v.into()),
            _ => panic!("{text}"),
        }
    }

    /// The golden line's form of a value (floats by their raw bits, so NaN compares).
    fn show(v: &Value) -> String {
        match v {
            Value::Null => "null".into(),
            Value::Int16(v) => format!("short:{v}"),
            Value::Int32(v) => format!("int:{v}"),
            Value::Int64(v) => format!("long:{v}"),
            Value::Float32(v) => format!("float:{:x}", v.to_bits()),
            Value::Float64(v) => format!("double:{:x}", v.to_bits()),
            Value::Boolean(v) => format!("boolean:{v}"),
            other => panic!("{other:?}"),
        }
    }

    fn schema(t: &str) -> Schema {
        match t {
            "BOOLEAN" => Schema::boolean(),
            "INT8" => Schema::int8(),
            "STRING" => Schema::string(),
            _ => panic!("{t}"),
        }
    }

    fn error_text(e: &ConnectError) -> String {
        let cause = std::error::Error::source(e).map(ToString::to_string);
        format!("{}|{}", e.message(), cause.unwrap_or_default())
    }

    /// Every line of Apache's output, through the key, value and header converter of the
    /// same class name.
    #[test]
    fn bytes_values_and_errors_equal_apaches() {
        let mut cases = 0;
        for line in GOLDEN.lines() {
            let cols: Vec<&str> = line.split('\t').collect();
            let class = format!("org.apache.kafka.connect.converters.{}", cols[1]);
            let mut key = converter_for_class(&class).unwrap();
            key.configure(&ConfigMap::new(), true).unwrap();
            let value_conv = converter_for_class(&class).unwrap();
            let header = header_converter_for_class(&class).unwrap();
            match cols[0] {
                "to" => {
                    let (schema, input) = match cols[2].split_once(' ') {
                        Some((s, v)) => (Some(schema(s.strip_prefix("schema:").unwrap())), v),
                        None => (None, cols[2]),
                    };
                    let v = value(input);
                    for got in [
                        key.from_connect_data("t", schema.as_ref(), &v),
                        value_conv.from_connect_data("t", schema.as_ref(), &v),
                        header.from_connect_header("t", "h", schema.as_ref(), &v),
                    ] {
                        let got = match got {
                            Ok(b) => hex(b.as_deref()),
                            Err(e) => format!("ERR {}", e.message()),
                        };
                        assert_eq!(got, cols[3], "{line}");
                    }
                }
                "from" => {
                    let bytes = unhex(cols[2]);
                    for got in [
                        key.to_connect_data("t", bytes.as_deref()),
                        value_conv.to_connect_data("t", bytes.as_deref()),
                        header.to_connect_header("t", "h", bytes.as_deref()),
                    ] {
                        let got = match got {
                            Ok(sv) => {
                                let s = sv.schema.as_ref().unwrap();
                                let opt = if s.is_optional() { "?" } else { "" };
                                format!("{}{opt}\t{}", s.schema_type(), show(&sv.value))
                            }
                            Err(e) => format!("ERR\t{}", error_text(&e)),
                        };
                        assert_eq!(got, cols[3..].join("\t"), "{line}");
                    }
                }
                other => panic!("{other}"),
            }
            cases += 1;
        }
        assert!(cases > 100, "{cases}");
    }
}
