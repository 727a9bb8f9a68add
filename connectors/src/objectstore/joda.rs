//! The part of Joda-Time that `path.format`, `locale` and `timezone` need: a `DateTimeFormat`
//! pattern formatter and fixed-offset zones.
//!
//! Supported pattern letters (Joda's meaning): `y`/`Y` year (`yy` two digits), `M` month (`MMM`
//! short and `MMMM` full English names), `d` day of month, `D` day of year, `H` hour 0-23, `k`
//! hour 1-24, `h` hour 1-12, `K` hour 0-11, `m` minute, `s` second, `S` fraction of second, `a`
//! AM/PM, `E` day of week (`E`..`EEE` short, `EEEE` full English name), `e` day of week 1-7,
//! `'text'` literals (`''` is a quote); other non-letters are literal. Any other letter is a
//! configuration error, never a silently different path.
//!
//! Zones: `UTC`/`GMT`/`Z`, fixed offsets (`+02:00`, `-0530`, `UTC+2`) and IANA ids
//! (`Europe/Paris`, `America/Los_Angeles`) from the `chrono-tz` database. Local times are
//! turned back into instants as Joda's `convertLocalToUTC(local, false)` does in the common
//! case (the offset in force at `local - offset(local)`); around a transition of a zone west of
//! Greenwich, Joda may choose the other offset.

use chrono::{Datelike, NaiveDateTime, Timelike};

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Literal(String),
    Field(char, usize),
}

/// A parsed Joda pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct JodaFormat {
    tokens: Vec<Token>,
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

impl JodaFormat {
    pub fn parse(pattern: &str) -> Result<Self, String> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut tokens = Vec::new();
        let mut i = 0;
        let mut literal = String::new();
        while i < chars.len() {
            let c = chars[i];
            if c == '\'' {
                if chars.get(i + 1) == Some(&'\'') {
                    literal.push('\'');
                    i += 2;
                    continue;
                }
                let mut j = i + 1;
                loop {
                    match chars.get(j) {
                        None => return Err(format!("unterminated quote in '{pattern}'")),
                        Some('\'') if chars.get(j + 1) == Some(&'\'') => {
                            literal.push('\'');
                            j += 2;
                        }
                        Some('\'') => break,
                        Some(ch) => {
                            literal.push(*ch);
                            j += 1;
                        }
                    }
                }
                i = j + 1;
            } else if c.is_ascii_alphabetic() {
                if !"yYMdDHkhKmsSaEe".contains(c) {
                    return Err(format!(
                        "pattern letter '{c}' of '{pattern}' is not supported by this worker"
                    ));
                }
                let mut n = 1;
                while chars.get(i + n) == Some(&c) {
                    n += 1;
                }
                if !literal.is_empty() {
                    tokens.push(Token::Literal(std::mem::take(&mut literal)));
                }
                tokens.push(Token::Field(c, n));
                i += n;
            } else {
                literal.push(c);
                i += 1;
            }
        }
        if !literal.is_empty() {
            tokens.push(Token::Literal(literal));
        }
        Ok(Self { tokens })
    }

    /// Whether the pattern prints names (months, days, AM/PM), which depend on the locale.
    pub fn has_text(&self) -> bool {
        self.tokens.iter().any(|t| {
            matches!(t, Token::Field('M', n) if *n >= 3)
                || matches!(t, Token::Field('E', _) | Token::Field('a', _))
        })
    }

    /// `millis` (UTC epoch) printed in local time of `zone`.
    pub fn format(&self, millis: i64, zone: &Zone) -> String {
        let local = millis + zone.offset_ms(millis);
        let dt = chrono::DateTime::from_timestamp_millis(local)
            .map_or(NaiveDateTime::MIN, |d| d.naive_utc());
        let mut out = String::new();
        for t in &self.tokens {
            match t {
                Token::Literal(s) => out.push_str(s),
                Token::Field(c, n) => {
                    let n = *n;
                    let num = |out: &mut String, v: i64| {
                        let s = v.abs().to_string();
                        if v < 0 {
                            out.push('-');
                        }
                        for _ in s.len()..n {
                            out.push('0');
                        }
                        out.push_str(&s);
                    };
                    match c {
                        'y' | 'Y' if n == 2 => {
                            out.push_str(&format!("{:02}", dt.year().rem_euclid(100)))
                        }
                        'y' | 'Y' => num(&mut out, i64::from(dt.year())),
                        'M' if n >= 4 => out.push_str(MONTHS[dt.month0() as usize]),
                        'M' if n == 3 => out.push_str(&MONTHS[dt.month0() as usize][..3]),
                        'M' => num(&mut out, i64::from(dt.month())),
                        'd' => num(&mut out, i64::from(dt.day())),
                        'D' => num(&mut out, i64::from(dt.ordinal())),
                        'H' => num(&mut out, i64::from(dt.hour())),
                        'k' => num(
                            &mut out,
                            i64::from(if dt.hour() == 0 { 24 } else { dt.hour() }),
                        ),
                        'h' => num(&mut out, i64::from((dt.hour() + 11) % 12 + 1)),
                        'K' => num(&mut out, i64::from(dt.hour() % 12)),
                        'm' => num(&mut out, i64::from(dt.minute())),
                        's' => num(&mut out, i64::from(dt.second())),
                        'S' => {
                            // Joda prints the fraction's leading digits (millisecond precision).
                            let ms = format!("{:03}", dt.nanosecond() / 1_000_000);
                            let mut digits: String = ms.chars().take(n).collect();
                            while digits.len() < n {
                                digits.push('0');
                            }
                            out.push_str(&digits);
                        }
                        'a' => out.push_str(if dt.hour() < 12 { "AM" } else { "PM" }),
                        'E' if n >= 4 => {
                            out.push_str(DAYS[dt.weekday().num_days_from_monday() as usize])
                        }
                        'E' => {
                            out.push_str(&DAYS[dt.weekday().num_days_from_monday() as usize][..3])
                        }
                        'e' => num(&mut out, i64::from(dt.weekday().number_from_monday())),
                        _ => unreachable!("letters are checked in parse"),
                    }
                }
            }
        }
        out
    }
}

/// A time zone: a fixed offset or an IANA zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Zone {
    Fixed(i64),
    Named(chrono_tz::Tz),
}

impl Zone {
    pub fn utc() -> Self {
        Self::Fixed(0)
    }

    /// The offset from UTC in force at the instant `utc_ms`.
    pub fn offset_ms(&self, utc_ms: i64) -> i64 {
        use chrono::{Offset, TimeZone};
        match self {
            Self::Fixed(ms) => *ms,
            Self::Named(tz) => {
                let at = chrono::DateTime::from_timestamp_millis(utc_ms)
                    .map_or(NaiveDateTime::MIN, |d| d.naive_utc());
                i64::from(tz.offset_from_utc_datetime(&at).fix().local_minus_utc()) * 1000
            }
        }
    }

    /// Local time (ms as if UTC) to the instant (Joda's `convertLocalToUTC(local, false)`).
    pub fn local_to_utc(&self, local_ms: i64) -> i64 {
        let guess = self.offset_ms(local_ms);
        local_ms - self.offset_ms(local_ms - guess)
    }

    /// Joda's `DateTimeZone.forID`.
    pub fn parse(id: &str) -> Result<Self, String> {
        match id {
            "UTC" | "GMT" | "Z" | "Etc/UTC" | "Etc/GMT" | "UCT" | "Zulu" | "Universal" => {
                return Ok(Self::utc());
            }
            _ => {}
        }
        if let Ok(tz) = id.parse::<chrono_tz::Tz>() {
            return Ok(Self::Named(tz));
        }
        let rest = ["UTC", "GMT"]
            .iter()
            .find_map(|p| id.strip_prefix(p))
            .unwrap_or(id);
        let unsupported = || {
            format!(
                "time zone '{id}' is not a zone id this worker knows: use UTC, a fixed offset \
                 such as +02:00, or an IANA id such as Europe/Paris"
            )
        };
        let (sign, digits) = match rest.as_bytes().first() {
            Some(b'+') => (1, &rest[1..]),
            Some(b'-') => (-1, &rest[1..]),
            _ => return Err(unsupported()),
        };
        let (h, m) = match digits.split_once(':') {
            Some((h, m)) => (h, m),
            None if digits.len() == 4 => (&digits[..2], &digits[2..]),
            None => (digits, "0"),
        };
        let h: i64 = h.parse().map_err(|_| unsupported())?;
        let m: i64 = m.parse().map_err(|_| unsupported())?;
        if !(0..=23).contains(&h) || !(0..=59).contains(&m) {
            return Err(unsupported());
        }
        Ok(Self::Fixed(sign * (h * 3_600_000 + m * 60_000)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let utc = Zone::utc();
        // 2021-03-07T05:04:03.021Z, a Sunday
        let t = 1_615_093_443_021;
        let f = |p: &str| JodaFormat::parse(p).unwrap().format(t, &utc);
        assert_eq!(
            f("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"),
            "year=2021/month=03/day=07/hour=05"
        );
        assert_eq!(f("yyyy-MM-dd HH:mm:ss.SSS"), "2021-03-07 05:04:03.021");
        assert_eq!(f("yy/M/d/H"), "21/3/7/5");
        assert_eq!(
            f("MMM MMMM EEE EEEE a hh k K D"),
            "Mar March Sun Sunday AM 05 5 5 66"
        );
        assert_eq!(f("'it''s' ''"), "it's '");
        assert!(JodaFormat::parse("yyyy/ww").is_err());
        assert!(JodaFormat::parse("'open").is_err());
    }

    #[test]
    fn zones() {
        assert_eq!(Zone::parse("UTC").unwrap().offset_ms(0), 0);
        assert_eq!(Zone::parse("+02:00").unwrap().offset_ms(0), 7_200_000);
        assert_eq!(Zone::parse("-0530").unwrap().offset_ms(0), -19_800_000);
        assert_eq!(Zone::parse("UTC+3").unwrap().offset_ms(0), 10_800_000);
        assert!(Zone::parse("Mars/Olympus").is_err());
        let paris = Zone::parse("Europe/Paris").unwrap();
        // 2024-01-15T12:00Z (CET, +1) and 2024-07-15T12:00Z (CEST, +2).
        assert_eq!(paris.offset_ms(1_705_320_000_000), 3_600_000);
        assert_eq!(paris.offset_ms(1_721_044_800_000), 7_200_000);
        let f = JodaFormat::parse("yyyy-MM-dd HH").unwrap();
        assert_eq!(f.format(1_721_044_800_000, &paris), "2024-07-15 14");
        // Local midnight of 2024-07-15 in Paris is 2024-07-14T22:00Z.
        assert_eq!(
            paris.local_to_utc(1_721_001_600_000),
            1_721_001_600_000 - 7_200_000
        );
        let f = JodaFormat::parse("dd HH").unwrap();
        assert_eq!(f.format(0, &Zone::parse("-01:00").unwrap()), "31 23");
    }
}
