//! KIP-891 plugin version requirements (`connector.plugin.version`,
//! `key|value|header.converter.plugin.version`): Maven version ranges, read as Apache's
//! `PluginUtils.connectorVersionRequirement` reads them with Maven's
//! `VersionRange.createFromVersionSpec`: `latest` (or no value) asks for nothing; a bare
//! version (`4.4.0`) is the exact version `[4.4.0]`; `[1.0,2.0)`, `(,2.0]`, `[1.0,)` and
//! comma-separated sets of them are ranges. Errors carry Maven's messages.
//!
//! Versions compare as Maven's `ComparableVersion` does for the usual forms: numbers
//! numerically with trailing zeros ignored (`4.4` equals `4.4.0`), the qualifiers `alpha` <
//! `beta` < `milestone` < `rc` < `snapshot` < release < `sp`, other qualifiers after them in
//! text order, a number after any qualifier.

use std::cmp::Ordering;
use std::fmt;

/// A hard version range (at least one restriction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRange {
    restrictions: Vec<Restriction>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Restriction {
    lower: Option<String>,
    lower_inclusive: bool,
    upper: Option<String>,
    upper_inclusive: bool,
}

/// The requirement a `*.plugin.version` value states: `None` for no value or `latest`.
pub fn version_requirement(spec: Option<&str>) -> Result<Option<VersionRange>, String> {
    let Some(spec) = spec.filter(|s| *s != "latest") else {
        return Ok(None);
    };
    let spec = spec.trim();
    match parse(spec)? {
        Some(range) if !range.restrictions.is_empty() => Ok(Some(range)),
        // A soft version becomes the exact version, as Apache's PluginUtils makes it.
        _ => parse(&format!("[{spec}]")),
    }
}

/// Maven's `createFromVersionSpec`: `Ok(None)` for a soft (recommended) version.
fn parse(spec: &str) -> Result<Option<VersionRange>, String> {
    let mut process = spec.to_owned();
    let mut restrictions: Vec<Restriction> = Vec::new();
    let mut upper_bound: Option<String> = None;
    while process.starts_with('[') || process.starts_with('(') {
        let close_paren = process.find(')');
        let close_bracket = process.find(']');
        let index = match (close_paren, close_bracket) {
            (Some(p), Some(b)) => p.min(b),
            (Some(i), None) | (None, Some(i)) => i,
            (None, None) => return Err(format!("Unbounded range: {spec}")),
        };
        let restriction = parse_restriction(&process[..=index])?;
        if upper_bound.is_some() {
            let overlaps = match (&restriction.lower, &upper_bound) {
                (None, _) => true,
                (Some(l), Some(u)) => compare(l, u) == Ordering::Less,
                (Some(_), None) => false,
            };
            if overlaps {
                return Err(format!("Ranges overlap: {spec}"));
            }
        }
        upper_bound = restriction.upper.clone();
        restrictions.push(restriction);
        process = process[index + 1..].trim().to_owned();
        if let Some(rest) = process.strip_prefix(',') {
            process = rest.trim().to_owned();
        }
    }
    if !process.is_empty() {
        if !restrictions.is_empty() {
            return Err(format!(
                "Only fully-qualified sets allowed in multiple set scenario: {spec}"
            ));
        }
        return Ok(None);
    }
    Ok(Some(VersionRange { restrictions }))
}

fn parse_restriction(spec: &str) -> Result<Restriction, String> {
    let lower_inclusive = spec.starts_with('[');
    let upper_inclusive = spec.ends_with(']');
    let process = spec[1..spec.len() - 1].trim();
    match process.find(',') {
        None => {
            if !lower_inclusive || !upper_inclusive {
                return Err(format!("Single version must be surrounded by []: {spec}"));
            }
            Ok(Restriction {
                lower: Some(process.to_owned()),
                lower_inclusive: true,
                upper: Some(process.to_owned()),
                upper_inclusive: true,
            })
        }
        Some(i) => {
            let bound = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
            let (lower, upper) = (bound(&process[..i]), bound(&process[i + 1..]));
            if let (Some(l), Some(u)) = (&lower, &upper) {
                let order = compare(u, l);
                if order == Ordering::Less
                    || (order == Ordering::Equal && (!lower_inclusive || !upper_inclusive))
                {
                    return Err(format!("Range defies version ordering: {spec}"));
                }
            }
            Ok(Restriction {
                lower,
                lower_inclusive,
                upper,
                upper_inclusive,
            })
        }
    }
}

impl VersionRange {
    /// Whether `version` satisfies the range.
    pub fn contains(&self, version: &str) -> bool {
        self.restrictions.iter().any(|r| {
            let above = r.lower.as_ref().is_none_or(|l| match compare(l, version) {
                Ordering::Less => true,
                Ordering::Equal => r.lower_inclusive,
                Ordering::Greater => false,
            });
            let below = r.upper.as_ref().is_none_or(|u| match compare(u, version) {
                Ordering::Greater => true,
                Ordering::Equal => r.upper_inclusive,
                Ordering::Less => false,
            });
            above && below
        })
    }
}

/// Maven's `VersionRange.toString` of a hard range: `[4.4.0,4.4.0]`, `[1.0,2.0),[3.0,)`.
impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.restrictions.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(
                f,
                "{}{},{}{}",
                if r.lower_inclusive { '[' } else { '(' },
                r.lower.as_deref().unwrap_or_default(),
                r.upper.as_deref().unwrap_or_default(),
                if r.upper_inclusive { ']' } else { ')' },
            )?;
        }
        Ok(())
    }
}

/// Apache's `Plugin ... has version ... which does not match the required version range ...`
/// for a plugin of one installed version (Apache's classpath plugins), or `None` when it
/// matches.
pub fn mismatch(class: &str, version: &str, range: &VersionRange) -> Option<String> {
    (!range.contains(version)).then(|| {
        format!(
            "Plugin {class} has version {version} which does not match the required version range {range}"
        )
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Number(u64),
    Qualifier(String),
}

/// `1.0-rc1` -> [1, 0, "rc", 1]; trailing zeros (and release qualifiers) dropped.
fn items(version: &str) -> Vec<Item> {
    let mut out = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, out: &mut Vec<Item>| {
        if current.is_empty() {
            return;
        }
        let item = match current.parse::<u64>() {
            Ok(n) => Item::Number(n),
            Err(_) => Item::Qualifier(match current.to_ascii_lowercase().as_str() {
                "a" => "alpha".to_owned(),
                "b" => "beta".to_owned(),
                "m" => "milestone".to_owned(),
                "cr" => "rc".to_owned(),
                "ga" | "final" | "release" => String::new(),
                other => other.to_owned(),
            }),
        };
        out.push(item);
        current.clear();
    };
    let mut last_digit: Option<bool> = None;
    for c in version.trim().chars() {
        if c == '.' || c == '-' || c == '_' {
            flush(&mut current, &mut out);
            last_digit = None;
            continue;
        }
        let digit = c.is_ascii_digit();
        if last_digit.is_some_and(|d| d != digit) {
            flush(&mut current, &mut out);
        }
        current.push(c);
        last_digit = Some(digit);
    }
    flush(&mut current, &mut out);
    while matches!(out.last(), Some(Item::Number(0)))
        || out.last() == Some(&Item::Qualifier(String::new()))
    {
        out.pop();
    }
    out
}

fn qualifier_rank(q: &str) -> (u8, &str) {
    match q {
        "alpha" => (0, ""),
        "beta" => (1, ""),
        "milestone" => (2, ""),
        "rc" => (3, ""),
        "snapshot" => (4, ""),
        "" => (5, ""),
        "sp" => (6, ""),
        other => (7, other),
    }
}

/// Maven's ordering of two versions (see the module docs).
pub fn compare(a: &str, b: &str) -> Ordering {
    let (a, b) = (items(a), items(b));
    for i in 0..a.len().max(b.len()) {
        let order = match (a.get(i), b.get(i)) {
            (Some(Item::Number(x)), Some(Item::Number(y))) => x.cmp(y),
            (Some(Item::Number(x)), None) => x.cmp(&0),
            (None, Some(Item::Number(y))) => 0.cmp(y),
            (Some(Item::Number(_)), Some(Item::Qualifier(_))) => Ordering::Greater,
            (Some(Item::Qualifier(_)), Some(Item::Number(_))) => Ordering::Less,
            (Some(Item::Qualifier(x)), Some(Item::Qualifier(y))) => {
                qualifier_rank(x).cmp(&qualifier_rank(y))
            }
            (Some(Item::Qualifier(x)), None) => qualifier_rank(x).cmp(&qualifier_rank("")),
            (None, Some(Item::Qualifier(y))) => qualifier_rank("").cmp(&qualifier_rank(y)),
            (None, None) => Ordering::Equal,
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Maven 3.9's answers (maven-artifact 3.9.16, which Apache 4.4 ships), through Apache's
    /// `connectorVersionRequirement`: the range printed, and whether 4.4.0 and 0.1.0 match.
    #[test]
    fn ranges_as_maven_reads_them() {
        for (spec, shown, has_4_4, has_0_1) in [
            ("4.4.0", "[4.4.0,4.4.0]", true, false),
            ("[4.4.0]", "[4.4.0,4.4.0]", true, false),
            ("[1.0,2.0)", "[1.0,2.0)", false, false),
            ("[4.0,)", "[4.0,)", true, false),
            ("(,5.0]", "(,5.0]", true, true),
            ("[4.4.0,4.4.0]", "[4.4.0,4.4.0]", true, false),
            ("4.4", "[4.4,4.4]", true, false),
            ("[4.4]", "[4.4,4.4]", true, false),
            ("[1.0,2.0),[3.0,)", "[1.0,2.0),[3.0,)", true, false),
        ] {
            let r = version_requirement(Some(spec)).unwrap().unwrap();
            assert_eq!(r.to_string(), shown, "{spec}");
            assert_eq!(r.contains("4.4.0"), has_4_4, "{spec}");
            assert_eq!(r.contains("0.1.0"), has_0_1, "{spec}");
        }
        assert_eq!(version_requirement(None).unwrap(), None);
        assert_eq!(version_requirement(Some("latest")).unwrap(), None);
    }

    #[test]
    fn invalid_specs_have_mavens_messages() {
        for (spec, message) in [
            ("[1.0", "Unbounded range: [1.0"),
            (
                "1.0]",
                "Only fully-qualified sets allowed in multiple set scenario: [1.0]]",
            ),
            ("(1.0)", "Single version must be surrounded by []: (1.0)"),
            ("[2.0,1.0]", "Range defies version ordering: [2.0,1.0]"),
            ("[1.0,2.0),[1.5,3.0)", "Ranges overlap: [1.0,2.0),[1.5,3.0)"),
            ("[1.0,1.0)", "Range defies version ordering: [1.0,1.0)"),
        ] {
            assert_eq!(
                version_requirement(Some(spec)).unwrap_err(),
                message,
                "{spec}"
            );
        }
    }

    #[test]
    fn versions_order_as_maven_orders_them() {
        assert_eq!(compare("4.4", "4.4.0"), Ordering::Equal);
        assert_eq!(compare("1.0-alpha", "1.0-beta"), Ordering::Less);
        assert_eq!(compare("1.0-rc1", "1.0"), Ordering::Less);
        assert_eq!(compare("1.0-SNAPSHOT", "1.0"), Ordering::Less);
        assert_eq!(compare("1.0", "1.0-sp"), Ordering::Less);
        assert_eq!(compare("1.10", "1.9"), Ordering::Greater);
        assert_eq!(
            mismatch(
                "org.apache.kafka.connect.json.JsonConverter",
                "0.1.0",
                &version_requirement(Some("4.4.0")).unwrap().unwrap()
            )
            .unwrap(),
            "Plugin org.apache.kafka.connect.json.JsonConverter has version 0.1.0 which does not match the required version range [4.4.0,4.4.0]"
        );
    }
}
