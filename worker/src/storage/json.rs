//! Compact JSON exactly as Java's Jackson writes it for `JsonConverter` (schemas disabled).
//!
//! Why not `serde_json::to_vec`: offsets are looked up by exact key *bytes* (spec §2.3), so the
//! bytes must match what a Java worker wrote. The two differ in two places:
//! - control characters: Jackson writes `\u001F` (upper-case hex), serde_json `\u001f`;
//! - doubles: Jackson uses Java's `Double.toString` (`1.0E10`, `1.0E-5`, `100.0`), serde_json
//!   writes `10000000000.0` and `1e-5`.
//!
//! Object keys are written in the map's order (`serde_json` is built with `preserve_order`).

use serde_json::Value;

/// Serializes `value` as compact JSON, byte-identical to Jackson's output for the same tree.
pub fn to_java_json(value: &Value) -> Vec<u8> {
    let mut out = String::new();
    write_value(&mut out, value);
    out.into_bytes()
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                out.push_str(&n.to_string());
            } else if let Some(f) = n.as_f64() {
                out.push_str(&java_double_to_string(f));
            } else {
                out.push_str(&n.to_string());
            }
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, v);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, k);
                out.push(':');
                write_value(out, v);
            }
            out.push('}');
        }
    }
}

fn write_str(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let b = c as u32 as usize;
                out.push_str("\\u00");
                out.push(HEX[b >> 4] as char);
                out.push(HEX[b & 0xF] as char);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Java's `Double.toString` (JDK 19+, shortest round-trip digits): plain notation with at least
/// one fractional digit for 1e-3 <= |d| < 1e7, otherwise `d.dddE<exp>`.
pub fn java_double_to_string(d: f64) -> String {
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    if d.is_nan() {
        return "NaN".to_owned();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let sign = if d < 0.0 { "-" } else { "" };
    let sci = format!("{:e}", d.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} always has an exponent");
    let exp: i32 = exp.parse().expect("exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let abs = d.abs();
    if (1e-3..1e7).contains(&abs) {
        if exp >= 0 {
            let int_len = (exp + 1) as usize;
            let (int_part, frac) = if digits.len() > int_len {
                (digits[..int_len].to_owned(), digits[int_len..].to_owned())
            } else {
                (
                    format!("{digits}{}", "0".repeat(int_len - digits.len())),
                    "0".to_owned(),
                )
            };
            format!("{sign}{int_part}.{frac}")
        } else {
            format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
        }
    } else {
        let frac = if digits.len() > 1 { &digits[1..] } else { "0" };
        format!("{sign}{}.{frac}E{exp}", &digits[..1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn doubles_print_like_java() {
        for (d, s) in [
            (1.0, "1.0"),
            (100.0, "100.0"),
            (0.5, "0.5"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1.0e7, "1.0E7"),
            (1.2345e10, "1.2345E10"),
            (9999999.0, "9999999.0"),
            (123.456, "123.456"),
            (-2.5, "-2.5"),
            (0.0, "0.0"),
        ] {
            assert_eq!(java_double_to_string(d), s, "{d}");
        }
    }

    #[test]
    fn strings_escape_like_jackson() {
        let v = json!(["a\"b\\c\n\u{1f}é/"]);
        assert_eq!(
            String::from_utf8(to_java_json(&v)).unwrap(),
            "[\"a\\\"b\\\\c\\n\\u001Fé/\"]"
        );
    }

    #[test]
    fn compact_and_ordered() {
        let v: Value = serde_json::from_str(r#"{"b": 2, "a": [1, true, null, 1.5]}"#).unwrap();
        assert_eq!(to_java_json(&v), br#"{"b":2,"a":[1,true,null,1.5]}"#);
    }
}
