//! `org.apache.kafka.connect.transforms.RegexRouter` and `TimestampRouter`.

use std::sync::Arc;

use chrono::{DateTime, Datelike, Timelike, Utc};
use connect_api::config::validators::lambda;
use connect_api::config::{
    ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance, TypedValue, Validator,
};
use connect_api::{ConnectError, Result};
use regex::Regex;

use crate::{Record, Transformation};

pub const REGEX: &str = "regex";
pub const REPLACEMENT: &str = "replacement";
pub const TOPIC_FORMAT: &str = "topic.format";
pub const TIMESTAMP_FORMAT: &str = "timestamp.format";

/// Compiles a Java regular expression for whole-string matching (`Matcher.matches`).
pub fn compile_full_match(pattern: &str) -> std::result::Result<Regex, String> {
    Regex::new(&format!("^(?:{pattern})$")).map_err(|e| e.to_string())
}

/// Apache's `RegexValidator`.
pub fn regex_validator() -> Arc<dyn Validator> {
    lambda("valid regex", |name, v| {
        let s = v.and_then(TypedValue::as_str).unwrap_or_default();
        compile_full_match(s)
            .map(|_| ())
            .map_err(|e| ConnectError::invalid_value(name, s, &format!("Invalid regex: {e}")))
    })
}

pub fn regex_router_config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(
                REGEX,
                T::String,
                Importance::High,
                "Regular expression to use for matching.",
            )
            .validator(regex_validator()),
        )
        .define(ConfigKey::new(
            REPLACEMENT,
            T::String,
            Importance::High,
            "Replacement string.",
        ))
}

/// Translates a Java replacement string (`$1`, `${name}`, `\$`) into the `regex` crate's syntax.
pub fn java_replacement(
    replacement: &str,
    group_count: usize,
) -> std::result::Result<String, String> {
    let chars: Vec<char> = replacement.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                i += 1;
                let c = *chars.get(i).ok_or("character to be escaped is missing")?;
                if c == '$' {
                    out.push_str("$$")
                } else {
                    out.push(c)
                }
            }
            '$' => {
                i += 1;
                match chars.get(i) {
                    None => return Err("Illegal group reference: group index is missing".into()),
                    Some('{') => {
                        let end = chars[i..]
                            .iter()
                            .position(|c| *c == '}')
                            .ok_or("named capturing group is missing trailing '}'")?;
                        let name: String = chars[i + 1..i + end].iter().collect();
                        out.push_str(&format!("${{{name}}}"));
                        i += end;
                    }
                    Some(c) if c.is_ascii_digit() => {
                        // Java takes further digits while the number stays a valid group.
                        let mut n = c.to_digit(10).unwrap_or(0) as usize;
                        if n > group_count {
                            return Err(format!("No group {n}"));
                        }
                        while let Some(d) = chars.get(i + 1).and_then(|c| c.to_digit(10)) {
                            let next = n * 10 + d as usize;
                            if next > group_count {
                                break;
                            }
                            n = next;
                            i += 1;
                        }
                        out.push_str(&format!("${{{n}}}"));
                    }
                    Some(_) => return Err("Illegal group reference".into()),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    Ok(out)
}

pub struct RegexRouter {
    regex: Option<Regex>,
    /// `replacement` in the regex crate's syntax, or Java's error for it (raised per record, as
    /// `Matcher.replaceFirst` does).
    replacement: std::result::Result<String, String>,
    /// The last topics routed: input -> output (`None` when the regex does not match). Routing
    /// is a pure function of the topic, and a task sees few topics. The first topic routed is
    /// kept outside the lock too (read with no atomic read-modify-write): most tasks write one.
    first: std::sync::OnceLock<(String, Option<String>)>,
    routed: std::sync::Mutex<Vec<(String, Option<String>)>>,
}

impl Default for RegexRouter {
    fn default() -> Self {
        Self {
            regex: None,
            replacement: Ok(String::new()),
            first: std::sync::OnceLock::new(),
            routed: std::sync::Mutex::default(),
        }
    }
}

/// How many topics [`RegexRouter`] remembers.
const ROUTED_TOPICS: usize = 32;

impl Transformation for RegexRouter {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = regex_router_config_def().parse(props)?;
        let pattern = c.string(REGEX).unwrap_or_default();
        let regex = compile_full_match(pattern).map_err(ConnectError::config)?;
        self.replacement = java_replacement(
            c.string(REPLACEMENT).unwrap_or_default(),
            regex.captures_len() - 1,
        );
        self.regex = Some(regex);
        self.first = std::sync::OnceLock::new();
        self.routed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        if let Some((t, out)) = self.first.get()
            && *t == record.topic
        {
            if let Some(topic) = out {
                record.topic.clone_from(topic);
            }
            return Ok(true);
        }
        let mut routed = self.routed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, out)) = routed.iter().find(|(t, _)| *t == record.topic) {
            if let Some(topic) = out {
                record.topic.clone_from(topic);
            }
            return Ok(true);
        }
        let regex = self
            .regex
            .as_ref()
            .ok_or_else(|| ConnectError::fatal("RegexRouter is not configured"))?;
        let out = match regex.captures(&record.topic) {
            Some(caps) => {
                let replacement = self
                    .replacement
                    .as_ref()
                    .map_err(|e| ConnectError::data(e.clone()))?;
                let mut topic = String::new();
                caps.expand(replacement, &mut topic);
                Some(topic)
            }
            None => None,
        };
        if self.first.get().is_none() {
            let _ = self.first.set((record.topic.clone(), out.clone()));
        } else {
            if routed.len() >= ROUTED_TOPICS {
                routed.remove(0);
            }
            routed.push((record.topic.clone(), out.clone()));
        }
        if let Some(topic) = out {
            record.topic = topic;
        }
        Ok(true)
    }

    fn config_def(&self) -> ConfigDef {
        regex_router_config_def()
    }
}

pub fn timestamp_router_config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(TOPIC_FORMAT, T::String, Importance::High, "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively.")
                .default_value("${topic}-${timestamp}"),
        )
        .define(
            ConfigKey::new(TIMESTAMP_FORMAT, T::String, Importance::High, "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>.")
                .default_value("yyyyMMdd"),
        )
}

#[derive(Default)]
pub struct TimestampRouter {
    topic_format: String,
    timestamp_format: String,
}

impl Transformation for TimestampRouter {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = timestamp_router_config_def().parse(props)?;
        self.topic_format = c.string(TOPIC_FORMAT).unwrap_or_default().to_owned();
        self.timestamp_format = c.string(TIMESTAMP_FORMAT).unwrap_or_default().to_owned();
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        let Some(ts) = record.timestamp else {
            return Err(ConnectError::data(format!(
                "Timestamp missing on record: {}",
                record_string(record)
            )));
        };
        // Apache builds the SimpleDateFormat lazily, so a bad pattern fails here, not in configure.
        let formatted =
            simple_date_format(&self.timestamp_format, ts).map_err(ConnectError::data)?;
        record.topic = self
            .topic_format
            .replace("${topic}", &record.topic)
            .replace("${timestamp}", &formatted);
        Ok(true)
    }

    fn config_def(&self) -> ConfigDef {
        timestamp_router_config_def()
    }
}

fn record_string(r: &Record) -> String {
    format!(
        "ConnectRecord{{topic='{}', kafkaPartition={}, timestamp=null}}",
        r.topic,
        r.kafka_partition
            .map_or_else(|| "null".to_owned(), |p| p.to_string())
    )
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// Formats epoch milliseconds in UTC with a `java.text.SimpleDateFormat` pattern (the letters
/// Connect users put in topic names: `y M d H h k K m s S a E D`, quoted literals).
pub fn simple_date_format(pattern: &str, millis: i64) -> std::result::Result<String, String> {
    let dt: DateTime<Utc> =
        DateTime::from_timestamp_millis(millis).ok_or("timestamp out of range")?;
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let pad = |v: i64, n: usize| format!("{v:0n$}");
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            if chars.get(i + 1) == Some(&'\'') {
                out.push('\'');
                i += 2;
                continue;
            }
            let end = chars[i + 1..]
                .iter()
                .position(|x| *x == '\'')
                .ok_or("Unterminated quote")?;
            out.extend(&chars[i + 1..i + 1 + end]);
            i += end + 2;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            out.push(c);
            i += 1;
            continue;
        }
        let mut n = 1;
        while chars.get(i + n) == Some(&c) {
            n += 1;
        }
        let text = match c {
            'y' | 'Y' => {
                let y = i64::from(dt.year());
                if n == 2 {
                    pad(y.rem_euclid(100), 2)
                } else {
                    pad(y, n)
                }
            }
            'M' | 'L' => match n {
                1 | 2 => pad(i64::from(dt.month()), n),
                3 => MONTHS[dt.month0() as usize][..3].to_owned(),
                _ => MONTHS[dt.month0() as usize].to_owned(),
            },
            'd' => pad(i64::from(dt.day()), n),
            'D' => pad(i64::from(dt.ordinal()), n),
            'H' => pad(i64::from(dt.hour()), n),
            'k' => pad(
                if dt.hour() == 0 {
                    24
                } else {
                    i64::from(dt.hour())
                },
                n,
            ),
            'K' => pad(i64::from(dt.hour() % 12), n),
            'h' => pad(
                if dt.hour().is_multiple_of(12) {
                    12
                } else {
                    i64::from(dt.hour() % 12)
                },
                n,
            ),
            'm' => pad(i64::from(dt.minute()), n),
            's' => pad(i64::from(dt.second()), n),
            'S' => pad(i64::from(dt.timestamp_subsec_millis()), n),
            'a' => (if dt.hour() < 12 { "AM" } else { "PM" }).to_owned(),
            'E' => {
                let d = DAYS[dt.weekday().num_days_from_monday() as usize];
                if n >= 4 {
                    d.to_owned()
                } else {
                    d[..3].to_owned()
                }
            }
            'u' => pad(i64::from(dt.weekday().number_from_monday()), n),
            'G' => "AD".to_owned(),
            'Z' => "+0000".to_owned(),
            'X' => "Z".to_owned(),
            'z' => (if n >= 4 {
                "Coordinated Universal Time"
            } else {
                "UTC"
            })
            .to_owned(),
            other => return Err(format!("Illegal pattern character '{other}'")),
        };
        out.push_str(&text);
        i += n;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_simple_date_format() {
        // 2024-03-05T07:08:09.012Z
        let ts = 1_709_622_489_012;
        assert_eq!(simple_date_format("yyyyMMdd", ts).unwrap(), "20240305");
        assert_eq!(
            simple_date_format("yyyy-MM-dd'T'HH:mm:ss.SSS", ts).unwrap(),
            "2024-03-05T07:08:09.012"
        );
        assert_eq!(
            simple_date_format("yy MMM EEE h a", ts).unwrap(),
            "24 Mar Tue 7 AM"
        );
        assert!(simple_date_format("yyyyq", ts).is_err());
    }

    #[test]
    fn java_replacements() {
        assert_eq!(java_replacement("$1-x", 1).unwrap(), "${1}-x");
        assert_eq!(java_replacement("$12", 1).unwrap(), "${1}2");
        assert_eq!(java_replacement("a\\$b", 0).unwrap(), "a$$b");
        assert!(java_replacement("$2", 1).is_err());
    }
}
