//! JSON as Confluent's JSON Schema serdes hold it (Jackson `JsonNode`s) and write it: the node
//! kinds that change how a value is written ([`Node`]), Jackson's compact writer, a reader that
//! keeps numbers exact (Jackson with `USE_BIG_DECIMAL_FOR_FLOATS` and exact big decimals), Java's
//! `BigDecimal.toString`, and the iteration order of a `java.util.HashMap` of strings, which
//! decides the order of keys in the schema texts Confluent registers.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use connect_api::{ConnectError, Result};

use crate::avro::schema::java_double;

/// How deep [`parse`] lets arrays and objects nest.
pub const MAX_DEPTH: usize = 256;

/// A JSON value with the number kinds Jackson writes differently.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    /// `ShortNode`, `IntNode`, `LongNode`.
    Int(i64),
    /// An integer beyond `i64` (`BigIntegerNode`), as its decimal text.
    BigInt(String),
    /// `FloatNode`: written by `Float.toString`.
    Float(f32),
    /// `DoubleNode`: written by `Double.toString`.
    Double(f64),
    /// `DecimalNode`: written by `BigDecimal.toString`; every number with a fraction or an
    /// exponent that is read.
    Decimal(BigDec),
    Text(String),
    /// `BinaryNode`: written as base64 text.
    Binary(Vec<u8>),
    Array(Vec<Node>),
    /// In insertion order, as Jackson's `ObjectNode` keeps it (a repeated key keeps the last
    /// value, at its first place).
    Object(Vec<(String, Node)>),
}

/// Jackson's `JsonNodeType` name of a node, as Confluent's messages print it.
pub fn node_type(node: &Node) -> &'static str {
    match node {
        Node::Null => "NULL",
        Node::Bool(_) => "BOOLEAN",
        Node::Int(_) | Node::BigInt(_) | Node::Float(_) | Node::Double(_) | Node::Decimal(_) => {
            "NUMBER"
        }
        Node::Text(_) => "STRING",
        Node::Binary(_) => "BINARY",
        Node::Array(_) => "ARRAY",
        Node::Object(_) => "OBJECT",
    }
}

impl Node {
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_number(&self) -> bool {
        matches!(
            self,
            Node::Int(_) | Node::BigInt(_) | Node::Float(_) | Node::Double(_) | Node::Decimal(_)
        )
    }

    /// The value of an integral number that fits `i64` (a decimal without fraction too).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Node::Int(v) => Some(*v),
            Node::Decimal(d) => d.to_i64(),
            _ => None,
        }
    }

    /// Any number as a double.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Node::Int(v) => Some(*v as f64),
            Node::BigInt(s) => s.parse().ok(),
            Node::Float(v) => Some(f64::from(*v)),
            Node::Double(v) => Some(*v),
            Node::Decimal(d) => Some(d.to_f64()),
            _ => None,
        }
    }

    /// An object's entry, replacing the value of a key already there (Jackson's `set`).
    pub fn set(entries: &mut Vec<(String, Node)>, key: String, value: Node) {
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => entries.push((key, value)),
        }
    }

    /// Jackson's compact text of the node (`ObjectMapper.writeValueAsString`).
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        write(&mut out, self);
        out
    }
}

/// A decimal as Java's `BigDecimal` holds it: an unscaled integer (its digits, any length) and a
/// scale, so that it is written back with the digits it was read with (`1.50` stays `1.50`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BigDec {
    pub negative: bool,
    /// The unscaled value's digits, without leading zeros (`"0"` for zero).
    pub digits: String,
    pub scale: i32,
}

impl BigDec {
    /// From an unscaled value and a scale (a Connect Decimal).
    pub fn new(unscaled: i128, scale: i32) -> Self {
        BigDec {
            negative: unscaled < 0,
            digits: unscaled.unsigned_abs().to_string(),
            scale,
        }
    }

    /// `new BigDecimal(text)`: `[+-]digits[.digits][(e|E)[+-]digits]`.
    pub fn parse(text: &str) -> Option<Self> {
        let (negative, rest) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], {
                let e = &rest[i + 1..];
                let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                e.parse::<i64>().ok()?
            }),
            None => (rest, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() && frac.is_empty()
            || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let scale = i32::try_from(frac.len() as i64 - exp).ok()?;
        let all = format!("{int}{frac}");
        let trimmed = all.trim_start_matches('0');
        Some(BigDec {
            negative: negative && !trimmed.is_empty(),
            digits: if trimmed.is_empty() {
                "0".to_owned()
            } else {
                trimmed.to_owned()
            },
            scale,
        })
    }

    /// `BigDecimal.toString()`: plain when the scale is not negative and the exponent is at
    /// least -6, else `d.dddE±n`.
    pub fn to_java_string(&self) -> String {
        let sign = if self.negative { "-" } else { "" };
        let len = self.digits.len() as i64;
        let adjusted = -i64::from(self.scale) + (len - 1);
        if self.scale == 0 {
            return format!("{sign}{}", self.digits);
        }
        if self.scale > 0 && adjusted >= -6 {
            let scale = self.scale as usize;
            return if self.digits.len() > scale {
                let (i, f) = self.digits.split_at(self.digits.len() - scale);
                format!("{sign}{i}.{f}")
            } else {
                format!(
                    "{sign}0.{}{}",
                    "0".repeat(scale - self.digits.len()),
                    self.digits
                )
            };
        }
        let (first, rest) = self.digits.split_at(1);
        let point = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if adjusted > 0 { "+" } else { "" };
        format!("{sign}{first}{point}E{exp_sign}{adjusted}")
    }

    pub fn is_zero(&self) -> bool {
        self.digits == "0"
    }

    /// The value when it is an integer that fits `i64`.
    pub fn to_i64(&self) -> Option<i64> {
        let digits = if self.scale >= 0 {
            let scale = self.scale as usize;
            if self.is_zero() {
                "0"
            } else if self.digits.len() > scale
                && self.digits[self.digits.len() - scale..]
                    .bytes()
                    .all(|b| b == b'0')
            {
                &self.digits[..self.digits.len() - scale]
            } else {
                return None;
            }
        } else {
            if self.digits.len() + self.scale.unsigned_abs() as usize > 20 {
                return None;
            }
            return format!(
                "{}{}{}",
                if self.negative { "-" } else { "" },
                self.digits,
                "0".repeat(self.scale.unsigned_abs() as usize)
            )
            .parse()
            .ok();
        };
        format!("{}{digits}", if self.negative { "-" } else { "" })
            .parse()
            .ok()
    }

    pub fn to_f64(&self) -> f64 {
        format!(
            "{}{}e{}",
            if self.negative { "-" } else { "" },
            self.digits,
            -i64::from(self.scale)
        )
        .parse()
        .unwrap_or(f64::NAN)
    }
}

/// Java's `Float.toString(f)` (shortest digits, `Double.toString`'s layout).
pub fn java_float(f: f32) -> String {
    if !f.is_finite() {
        return non_finite(f64::from(f)).to_owned();
    }
    java_double(f.to_string().parse().expect("a float's text reads back"))
}

fn non_finite(d: f64) -> &'static str {
    if d.is_nan() {
        "NaN"
    } else if d > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

/// `s` as a JSON string the way Jackson writes it.
pub fn push_str(out: &mut String, s: &str) {
    crate::avro::schema::push_str(out, s);
}

/// Jackson's compact writing of `node` (`JsonWriteFeature.WRITE_NAN_AS_STRINGS`, on by default:
/// NaN and the infinities as strings).
pub fn write(out: &mut String, node: &Node) {
    match node {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Int(v) => out.push_str(&v.to_string()),
        Node::BigInt(s) => out.push_str(s),
        Node::Float(f) if f.is_finite() => out.push_str(&java_float(*f)),
        Node::Double(d) if d.is_finite() => out.push_str(&java_double(*d)),
        Node::Float(f) => push_str(out, non_finite(f64::from(*f))),
        Node::Double(d) => push_str(out, non_finite(*d)),
        Node::Decimal(d) => out.push_str(&d.to_java_string()),
        Node::Text(s) => push_str(out, s),
        Node::Binary(b) => push_str(out, &BASE64.encode(b)),
        Node::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item);
            }
            out.push(']');
        }
        Node::Object(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_str(out, k);
                out.push(':');
                write(out, v);
            }
            out.push('}');
        }
    }
}

/// Reads one JSON value (whitespace around it only), as Jackson's `readTree` with
/// `ALLOW_NON_NUMERIC_NUMBERS` (`NaN`, `Infinity`, `-Infinity`, `+Infinity`, `INF`, `-INF`,
/// `+INF`): integers that fit `i64` are [`Node::Int`], larger ones [`Node::BigInt`], other
/// numbers exact [`Node::Decimal`]s (the non-numeric ones [`Node::Double`]).
pub fn parse(bytes: &[u8]) -> Result<Node> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ConnectError::data(format!("Invalid UTF-8 in JSON: {e}")))?;
    let mut p = Parser { text, pos: 0 };
    p.ws();
    let node = p.value(0)?;
    p.ws();
    if p.pos != text.len() {
        return Err(p.error("unexpected content after the JSON value"));
    }
    Ok(node)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> ConnectError {
        ConnectError::data(format!("Invalid JSON at offset {}: {what}", self.pos))
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, word: &str) -> bool {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node> {
        if depth > MAX_DEPTH {
            return Err(self.error(&format!("nested deeper than {MAX_DEPTH}")));
        }
        match self.peek() {
            Some(b'{') => {
                self.pos += 1;
                let mut entries: Vec<(String, Node)> = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Ok(Node::Object(entries));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.error("expected a field name"));
                    }
                    let key = self.string()?;
                    self.ws();
                    if self.peek() != Some(b':') {
                        return Err(self.error("expected ':'"));
                    }
                    self.pos += 1;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    Node::set(&mut entries, key, v);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(Node::Object(entries));
                        }
                        _ => return Err(self.error("expected ',' or '}'")),
                    }
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(Node::Array(items));
                }
                loop {
                    self.ws();
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(Node::Array(items));
                        }
                        _ => return Err(self.error("expected ',' or ']'")),
                    }
                }
            }
            Some(b'"') => Ok(Node::Text(self.string()?)),
            Some(b't') if self.eat("true") => Ok(Node::Bool(true)),
            Some(b'f') if self.eat("false") => Ok(Node::Bool(false)),
            Some(b'n') if self.eat("null") => Ok(Node::Null),
            Some(b'N') if self.eat("NaN") => Ok(Node::Double(f64::NAN)),
            Some(b'I') if self.eat("Infinity") || self.eat("INF") => {
                Ok(Node::Double(f64::INFINITY))
            }
            Some(b'+') if self.eat("+Infinity") || self.eat("+INF") => {
                Ok(Node::Double(f64::INFINITY))
            }
            Some(b'-') if self.eat("-Infinity") || self.eat("-INF") => {
                Ok(Node::Double(f64::NEG_INFINITY))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("expected a value")),
        }
    }

    fn number(&mut self) -> Result<Node> {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut i = self.pos;
        if bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let int_digits = &self.text[int_start..i];
        if int_digits.is_empty() || (int_digits.len() > 1 && int_digits.starts_with('0')) {
            self.pos = i;
            return Err(self.error("invalid number"));
        }
        let mut integral = true;
        if bytes.get(i) == Some(&b'.') {
            integral = false;
            i += 1;
            let f = i;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == f {
                self.pos = i;
                return Err(self.error("invalid number"));
            }
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            integral = false;
            i += 1;
            if matches!(bytes.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let e = i;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == e {
                self.pos = i;
                return Err(self.error("invalid number"));
            }
        }
        self.pos = i;
        let text = &self.text[start..i];
        if integral {
            return Ok(match text.parse::<i64>() {
                Ok(v) => Node::Int(v),
                Err(_) => Node::BigInt(text.to_owned()),
            });
        }
        BigDec::parse(text)
            .map(Node::Decimal)
            .ok_or_else(|| self.error("number out of range"))
    }

    fn string(&mut self) -> Result<String> {
        self.pos += 1; // the opening quote
        let mut out = String::new();
        loop {
            let rest = &self.text[self.pos..];
            let Some(i) = rest.find(['"', '\\']) else {
                return Err(self.error("unterminated string"));
            };
            let chunk = &rest[..i];
            if chunk.chars().any(|c| u32::from(c) < 0x20) {
                return Err(self.error("unescaped control character in a string"));
            }
            out.push_str(chunk);
            self.pos += i;
            if self.peek() == Some(b'"') {
                self.pos += 1;
                return Ok(out);
            }
            self.pos += 1; // the backslash
            let c = self
                .peek()
                .ok_or_else(|| self.error("unterminated string"))?;
            self.pos += 1;
            match c {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let hi = self.hex4()?;
                    let c = if (0xD800..0xDC00).contains(&hi) {
                        if !self.eat("\\u") {
                            return Err(self.error("unpaired surrogate"));
                        }
                        let lo = self.hex4()?;
                        if !(0xDC00..0xE000).contains(&lo) {
                            return Err(self.error("unpaired surrogate"));
                        }
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                    } else {
                        char::from_u32(hi)
                    };
                    out.push(c.ok_or_else(|| self.error("unpaired surrogate"))?);
                }
                _ => return Err(self.error("invalid escape")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32> {
        let h = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.error("invalid \\u escape"))?;
        self.pos += 4;
        Ok(u32::from_str_radix(h, 16).expect("four hex digits"))
    }
}

pub use connect_api::java_order::{java_hash_map_order, java_hash_order, java_string_hash};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_decimal_text_is_javas() {
        for (text, java) in [
            ("1.5600", "1.5600"),
            ("1.56", "1.56"),
            ("0.001", "0.001"),
            ("0.0000001", "1E-7"),
            ("-0.000000012", "-1.2E-8"),
            ("1.0E20", "1.0E+20"),
            ("1e5", "1E+5"),
            ("12", "12"),
            ("-0.0", "0.0"),
            ("1.20E+4", "1.20E+4"),
            ("123.456e1", "1234.56"),
        ] {
            let d = BigDec::parse(text).unwrap();
            assert_eq!(d.to_java_string(), java, "{text}");
        }
        assert_eq!(BigDec::new(-156, 2).to_java_string(), "-1.56");
        assert_eq!(BigDec::new(120, -2).to_java_string(), "1.20E+4");
        assert_eq!(BigDec::new(0, -2).to_java_string(), "0E+2");
        assert_eq!(BigDec::parse("12.000").unwrap().to_i64(), Some(12));
        assert_eq!(BigDec::parse("1.5").unwrap().to_i64(), None);
        assert_eq!(BigDec::parse("1e3").unwrap().to_i64(), Some(1000));
        assert_eq!(BigDec::parse("1.").unwrap().to_java_string(), "1");
        assert!(BigDec::parse("e3").is_none() && BigDec::parse("1.x").is_none());
    }

    #[test]
    fn jackson_writes_numbers_and_strings() {
        let node = Node::Array(vec![
            Node::Float(12.2),
            Node::Float(1.0e10),
            Node::Float(1.0),
            Node::Double(1.0e20),
            Node::Double(-1.0e-300),
            Node::Double(f64::NAN),
            Node::Text("q\"\u{1}é\t".into()),
            Node::Binary(vec![0, 1, 0x80, 0xff]),
        ]);
        assert_eq!(
            node.to_json(),
            r#"[12.2,1.0E10,1.0,1.0E20,-1.0E-300,"NaN","q\"\u0001é\t","AAGA/w=="]"#
        );
    }

    #[test]
    fn parses_exactly() {
        let n = parse(
            br#" {"a":[1,-2.50,1e2,9223372036854775808,"x\u00e9\ud83d\ude00",null,true],"a":NaN} "#,
        )
        .unwrap();
        let Node::Object(entries) = &n else { panic!() };
        assert_eq!(entries.len(), 1);
        assert!(matches!(entries[0].1, Node::Double(d) if d.is_nan()));
        let n = parse(br#"[1,-2.50,1e2,9223372036854775808,"x\u00e9\ud83d\ude00"]"#).unwrap();
        assert_eq!(
            n,
            Node::Array(vec![
                Node::Int(1),
                Node::Decimal(BigDec::parse("-2.50").unwrap()),
                Node::Decimal(BigDec::parse("1e2").unwrap()),
                Node::BigInt("9223372036854775808".into()),
                Node::Text("xé😀".into()),
            ])
        );
        for bad in [
            &b"{"[..],
            b"[1,]",
            b"01",
            b"1 2",
            b"\"\x01\"",
            b"{\"a\" 1}",
            b"-",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let deep = "[".repeat(MAX_DEPTH + 2) + &"]".repeat(MAX_DEPTH + 2);
        assert!(parse(deep.as_bytes()).is_err());
    }

    #[test]
    fn java_hash_map_orders() {
        assert_eq!(java_string_hash("connect.index"), 0x7c66b6ce_u32 as i32);
        // Recorded from Java: a HashMap of these field names iterates them in this order.
        let fields = [
            "int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string", "bytes",
            "array", "map",
        ];
        let order: Vec<&str> = java_hash_map_order(&fields, None)
            .into_iter()
            .map(|i| fields[i])
            .collect();
        assert_eq!(
            order,
            [
                "boolean", "string", "int32", "array", "int64", "bytes", "int8", "float32",
                "float64", "map", "int16"
            ]
        );
    }
}
