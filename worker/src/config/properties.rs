//! Java `.properties` files, as `java.util.Properties.load` reads them.
//!
//! Worker configs written for Apache Kafka Connect (`connect-distributed.properties`) must load
//! unchanged, so this follows the Java rules rather than a simpler `key=value` split:
//! `#`/`!` comments, `=`, `:` or whitespace as the separator, a trailing odd backslash joining
//! the next line (whose leading whitespace is dropped), and `\t \n \r \f \uXXXX` escapes.

use std::collections::BTreeMap;

/// Parses the text of a `.properties` file. Later keys win, as in Java.
pub fn parse(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for logical in logical_lines(text) {
        let (key, value) = split_key_value(&logical);
        out.insert(unescape(key), unescape(value));
    }
    out
}

/// Joins continuation lines and drops comments and blank lines.
fn logical_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current: Option<String> = None;
    for raw in text.lines() {
        let line = match current {
            // A continuation line's leading whitespace is not part of the value.
            Some(_) => raw.trim_start(),
            None => {
                let trimmed = raw.trim_start();
                if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
                    continue;
                }
                trimmed
            }
        };
        let continues = ends_with_odd_backslashes(line);
        let content = if continues {
            &line[..line.len() - 1]
        } else {
            line
        };
        let joined = current.take().unwrap_or_default() + content;
        if continues {
            current = Some(joined);
        } else {
            lines.push(joined);
        }
    }
    if let Some(rest) = current {
        lines.push(rest);
    }
    lines
}

fn ends_with_odd_backslashes(line: &str) -> bool {
    line.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

/// Splits at the first unescaped `=`, `:` or whitespace; separators around it are skipped.
fn split_key_value(line: &str) -> (&str, &str) {
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut key_end = bytes.len();
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'=' | b':' | b' ' | b'\t' | b'\x0c' => {
                key_end = i;
                break;
            }
            _ => i += 1,
        }
    }
    let key_end = key_end.min(bytes.len());
    let mut j = key_end;
    while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'\x0c') {
        j += 1;
    }
    if j < bytes.len() && matches!(bytes[j], b'=' | b':') {
        j += 1;
        while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'\x0c') {
            j += 1;
        }
    }
    (&line[..key_end], &line[j.min(line.len())..])
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.clone().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) if hex.len() == 4 => {
                        out.push(ch);
                        for _ in 0..4 {
                            chars.next();
                        }
                    }
                    // Java throws on a malformed \u escape; keeping the text is kinder and
                    // the config validation that follows names the key if the value is wrong.
                    _ => out.push('u'),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_the_shipped_connect_distributed_example() {
        let text = "\
# comment\n\
! also a comment\n\
bootstrap.servers=localhost:9092\n\
group.id = connect-cluster\n\
key.converter: org.apache.kafka.connect.json.JsonConverter\n\
offset.flush.interval.ms 10000\n\
listeners=HTTP://:8083\n\
plugin.path=/usr/share/java,\\\n\
        /opt/connectors\n\
empty=\n\
path=C:\\\\kafka\\\\data\n\
unicode=caf\\u00e9\n";
        let p = parse(text);
        assert_eq!(p["bootstrap.servers"], "localhost:9092");
        assert_eq!(p["group.id"], "connect-cluster");
        assert_eq!(
            p["key.converter"],
            "org.apache.kafka.connect.json.JsonConverter"
        );
        assert_eq!(p["offset.flush.interval.ms"], "10000");
        assert_eq!(p["listeners"], "HTTP://:8083");
        assert_eq!(p["plugin.path"], "/usr/share/java,/opt/connectors");
        assert_eq!(p["empty"], "");
        assert_eq!(p["path"], "C:\\kafka\\data");
        assert_eq!(p["unicode"], "café");
        assert_eq!(p.len(), 9);
    }

    #[test]
    fn escaped_separator_stays_in_the_key() {
        let p = parse("a\\=b=c\nkey\\ with\\ space = v\n");
        assert_eq!(p["a=b"], "c");
        assert_eq!(p["key with space"], "v");
    }

    proptest! {
        #[test]
        fn never_panics(text in ".*") {
            let _ = parse(&text);
        }

        #[test]
        fn simple_pairs_round_trip(key in "[a-z][a-z0-9.]{0,20}", value in "[a-zA-Z0-9:/,._-]{0,30}") {
            let p = parse(&format!("{key}={value}\n"));
            prop_assert_eq!(p.get(&key).map(String::as_str), Some(value.as_str()));
        }
    }
}
