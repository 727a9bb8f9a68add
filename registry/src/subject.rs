//! Subject name strategies (Confluent's `io.confluent.kafka.serializers.subject.*`): under which
//! subject a record's schema is registered and looked up.

use connect_api::{ConnectError, Result};

pub const TOPIC_NAME_STRATEGY: &str = "io.confluent.kafka.serializers.subject.TopicNameStrategy";
pub const RECORD_NAME_STRATEGY: &str = "io.confluent.kafka.serializers.subject.RecordNameStrategy";
pub const TOPIC_RECORD_NAME_STRATEGY: &str =
    "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectNameStrategy {
    /// `<topic>-key` / `<topic>-value`.
    TopicName,
    /// The record's fully-qualified name.
    RecordName,
    /// `<topic>-<record name>`.
    TopicRecordName,
}

impl SubjectNameStrategy {
    /// By class name or simple name (Apicurio's own strategies under their names too).
    pub fn from_class(class: &str) -> Result<Self> {
        let simple = class.trim().rsplit('.').next().unwrap_or_default();
        Ok(match simple {
            "" | "TopicNameStrategy" | "TopicIdStrategy" => Self::TopicName,
            "RecordNameStrategy" | "RecordIdStrategy" => Self::RecordName,
            "TopicRecordNameStrategy" | "TopicRecordIdStrategy" => Self::TopicRecordName,
            _ => {
                return Err(ConnectError::config(format!(
                    "Unknown subject name strategy {class}: this worker has TopicNameStrategy, RecordNameStrategy and TopicRecordNameStrategy"
                )));
            }
        })
    }

    /// The Java class name.
    pub fn class(self) -> &'static str {
        match self {
            Self::TopicName => TOPIC_NAME_STRATEGY,
            Self::RecordName => RECORD_NAME_STRATEGY,
            Self::TopicRecordName => TOPIC_RECORD_NAME_STRATEGY,
        }
    }

    /// The subject for `topic`; `record_name` is the schema's name (a record's full name, a
    /// primitive's type name), as Confluent's `ParsedSchema.name()`.
    pub fn subject(self, topic: &str, is_key: bool, record_name: &str) -> String {
        match self {
            Self::TopicName => format!("{topic}-{}", if is_key { "key" } else { "value" }),
            Self::RecordName => record_name.to_owned(),
            Self::TopicRecordName => format!("{topic}-{record_name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects() {
        let t = SubjectNameStrategy::from_class(TOPIC_NAME_STRATEGY).unwrap();
        assert_eq!(t.subject("orders", false, "x.R"), "orders-value");
        assert_eq!(t.subject("orders", true, "x.R"), "orders-key");
        let r = SubjectNameStrategy::from_class("RecordNameStrategy").unwrap();
        assert_eq!(r.subject("orders", false, "x.R"), "x.R");
        let tr = SubjectNameStrategy::from_class(TOPIC_RECORD_NAME_STRATEGY).unwrap();
        assert_eq!(tr.subject("orders", false, "x.R"), "orders-x.R");
        assert!(SubjectNameStrategy::from_class("com.example.Mine").is_err());
    }
}
