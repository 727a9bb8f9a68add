//! Connect's logical types, stored physically as Java's `Decimal`, `Date`, `Time`, `Timestamp`
//! classes do: Decimal = BYTES holding the unscaled value as big-endian two's complement with a
//! `scale` parameter; Date = INT32 days since the epoch; Time = INT32 milliseconds since
//! midnight; Timestamp = INT64 milliseconds since the epoch.

use super::{Schema, SchemaBuilder, SchemaType};
use crate::error::{ConnectError, Result};

pub const DECIMAL_NAME: &str = "org.apache.kafka.connect.data.Decimal";
pub const DECIMAL_SCALE_PARAMETER: &str = "scale";
pub const DATE_NAME: &str = "org.apache.kafka.connect.data.Date";
pub const TIME_NAME: &str = "org.apache.kafka.connect.data.Time";
pub const TIMESTAMP_NAME: &str = "org.apache.kafka.connect.data.Timestamp";

pub fn decimal_builder(scale: i32) -> SchemaBuilder {
    SchemaBuilder::new(SchemaType::Bytes)
        .name(DECIMAL_NAME)
        .parameter(DECIMAL_SCALE_PARAMETER, scale.to_string())
        .version(1)
}
pub fn date_builder() -> SchemaBuilder {
    SchemaBuilder::new(SchemaType::Int32)
        .name(DATE_NAME)
        .version(1)
}
pub fn time_builder() -> SchemaBuilder {
    SchemaBuilder::new(SchemaType::Int32)
        .name(TIME_NAME)
        .version(1)
}
pub fn timestamp_builder() -> SchemaBuilder {
    SchemaBuilder::new(SchemaType::Int64)
        .name(TIMESTAMP_NAME)
        .version(1)
}

/// The largest scale (either sign) a Decimal may have here. Java's `BigDecimal` allows any
/// `int`, but the scale comes from the record's schema, so an unbounded one lets a single
/// record build a gigabyte-long string or spin for billions of steps. Postgres bounds a
/// `NUMERIC` column's scale by the same figure.
pub const MAX_DECIMAL_SCALE: i32 = 1000;

fn check_scale(scale: i32) -> Result<()> {
    if scale.unsigned_abs() > MAX_DECIMAL_SCALE.unsigned_abs() {
        return Err(ConnectError::data(format!(
            "Decimal scale {scale} is not supported (at most {MAX_DECIMAL_SCALE} either way)"
        )));
    }
    Ok(())
}

/// The scale of a Decimal schema, or `None` if `schema` is not a Decimal.
pub fn decimal_scale(schema: &Schema) -> Option<i32> {
    if schema.name() != Some(DECIMAL_NAME) {
        return None;
    }
    schema
        .parameters()
        .get(DECIMAL_SCALE_PARAMETER)
        .and_then(|s| s.parse().ok())
}

/// A decimal that fits 128 bits: `unscaled * 10^-scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    pub unscaled: i128,
    pub scale: i32,
}

impl Decimal {
    /// The minimal big-endian two's-complement bytes Java's `BigInteger.toByteArray` yields.
    pub fn to_bytes(self) -> Vec<u8> {
        let full = self.unscaled.to_be_bytes();
        let mut start = 0;
        // Drop redundant sign bytes while the next byte still carries the sign.
        while start < full.len() - 1 {
            let (b, next) = (full[start], full[start + 1]);
            if (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
                start += 1;
            } else {
                break;
            }
        }
        full[start..].to_vec()
    }

    /// Fails on more than 16 bytes and on a scale beyond [`MAX_DECIMAL_SCALE`].
    pub fn from_bytes(bytes: &[u8], scale: i32) -> Result<Self> {
        check_scale(scale)?;
        if bytes.is_empty() || bytes.len() > 16 {
            return Err(ConnectError::data(format!(
                "Decimal of {} bytes is not supported (1 to 16 bytes)",
                bytes.len()
            )));
        }
        let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0x00 };
        let mut full = [fill; 16];
        full[16 - bytes.len()..].copy_from_slice(bytes);
        Ok(Self {
            unscaled: i128::from_be_bytes(full),
            scale,
        })
    }

    /// Plain decimal text such as `-12.340` (Java's `BigDecimal.toPlainString`). At most
    /// about 40 + |scale| characters: decimals from record data have a bounded scale (see
    /// [`Decimal::from_bytes`], [`Decimal::parse`]).
    pub fn to_plain_string(self) -> String {
        let digits = self.unscaled.unsigned_abs().to_string();
        let sign = if self.unscaled < 0 { "-" } else { "" };
        if self.scale <= 0 {
            let zeros = "0".repeat(self.scale.unsigned_abs() as usize);
            return if self.unscaled == 0 {
                "0".to_owned()
            } else {
                format!("{sign}{digits}{zeros}")
            };
        }
        let scale = self.scale as usize;
        let padded = if digits.len() <= scale {
            format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits)
        } else {
            digits
        };
        let (int, frac) = padded.split_at(padded.len() - scale);
        format!("{sign}{int}.{frac}")
    }

    /// Parses decimal text (`12.5`, `-3`, `1e3`) and rescales it to `scale` exactly.
    pub fn parse(text: &str, scale: i32) -> Result<Self> {
        check_scale(scale)?;
        let bad = || ConnectError::data(format!("Invalid decimal value {text}"));
        let (mantissa, exp) = match text.find(['e', 'E']) {
            Some(i) => (&text[..i], text[i + 1..].parse::<i32>().map_err(|_| bad())?),
            None => (text, 0),
        };
        let (neg, mantissa) = match mantissa.strip_prefix('-') {
            Some(m) => (true, m),
            None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() && frac.is_empty()
            || !(int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()))
        {
            return Err(bad());
        }
        let mut unscaled: i128 = format!("0{int}{frac}").parse().map_err(|_| bad())?;
        // value = unscaled * 10^(exp - frac.len()); bring it to 10^-scale.
        let shift = i64::from(exp) - frac.len() as i64 + i64::from(scale);
        // Zero rescales to zero; anything else overflows i128 (or leaves a non-zero digit)
        // within 40 steps, so the loops below stay short whatever the exponent.
        if unscaled == 0 {
            return Ok(Self { unscaled, scale });
        }
        if shift >= 0 {
            for _ in 0..shift {
                unscaled = unscaled.checked_mul(10).ok_or_else(bad)?;
            }
        } else {
            for _ in 0..(-shift) {
                if unscaled % 10 != 0 {
                    return Err(ConnectError::data(format!(
                        "Decimal value {text} does not fit scale {scale}"
                    )));
                }
                unscaled /= 10;
            }
        }
        Ok(Self {
            unscaled: if neg { -unscaled } else { unscaled },
            scale,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_match_java_biginteger() {
        for (v, bytes) in [
            (0i128, vec![0u8]),
            (127, vec![0x7f]),
            (128, vec![0x00, 0x80]),
            (-1, vec![0xff]),
            (-129, vec![0xff, 0x7f]),
            (1234, vec![0x04, 0xd2]),
        ] {
            let d = Decimal {
                unscaled: v,
                scale: 2,
            };
            assert_eq!(d.to_bytes(), bytes, "{v}");
            assert_eq!(Decimal::from_bytes(&bytes, 2).unwrap(), d);
        }
    }

    #[test]
    fn plain_strings() {
        let d = |u, s| {
            Decimal {
                unscaled: u,
                scale: s,
            }
            .to_plain_string()
        };
        assert_eq!(d(1234, 2), "12.34");
        assert_eq!(d(-5, 3), "-0.005");
        assert_eq!(d(7, 0), "7");
        assert_eq!(d(7, -2), "700");
        assert_eq!(Decimal::parse("12.34", 2).unwrap().unscaled, 1234);
        assert_eq!(Decimal::parse("-0.5", 3).unwrap().unscaled, -500);
        assert_eq!(Decimal::parse("1e2", 0).unwrap().unscaled, 100);
        assert!(Decimal::parse("1.234", 2).is_err());
        assert!(Decimal::parse("abc", 2).is_err());
    }

    /// The scale comes from record data: a huge one is a data error, not a gigabyte string or
    /// billions of loop steps.
    #[test]
    fn scales_from_record_data_are_bounded() {
        for scale in [
            i32::MAX,
            i32::MIN,
            MAX_DECIMAL_SCALE + 1,
            -MAX_DECIMAL_SCALE - 1,
        ] {
            let e = Decimal::from_bytes(&[1], scale).unwrap_err();
            assert!(e.to_string().contains("scale"), "{e}");
            assert!(Decimal::parse("1", scale).is_err());
            assert!(Decimal::parse("0", scale).is_err());
        }
        let d = Decimal::from_bytes(&[1], -MAX_DECIMAL_SCALE).unwrap();
        assert_eq!(d.to_plain_string().len(), 1 + MAX_DECIMAL_SCALE as usize);
        let d = Decimal::from_bytes(&[0xff], MAX_DECIMAL_SCALE).unwrap();
        assert_eq!(d.to_plain_string().len(), 3 + MAX_DECIMAL_SCALE as usize);
        // Exponents are not bounded by the scale: zero and overflow end at once.
        assert_eq!(Decimal::parse("0e2000000000", 2).unwrap().unscaled, 0);
        assert_eq!(Decimal::parse("0.0e-2000000000", 2).unwrap().unscaled, 0);
        assert!(Decimal::parse("1e2000000000", 2).is_err());
        assert!(Decimal::parse("1e-2000000000", 2).is_err());
    }
}
