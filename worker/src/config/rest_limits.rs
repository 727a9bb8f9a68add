//! Keys of ours that bound what one client can hold on every REST listener (`listeners` and
//! `admin.listeners`, http and https): how long it may take to send a request's headers, how
//! long a request may take in all, and how many connections are served at once.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{ConfigError, Props};

/// A connection that has not sent a complete request head within this time is closed; also
/// how long an idle keep-alive connection stays open (Jetty's default idle timeout is 30 s).
pub const REST_HEADER_READ_TIMEOUT_MS: &str = "rest.header.read.timeout.ms";
pub const DEFAULT_HEADER_READ_TIMEOUT_MS: i64 = 30_000;

/// A request not answered within this time (body upload included) answers 500 with Connect's
/// error body. Above Connect's 90 s REST request timeout, which forwarded requests and
/// requests waiting for the herder use, so those answer with their own message first.
pub const REST_REQUEST_TIMEOUT_MS: &str = "rest.request.timeout.ms";
pub const DEFAULT_REQUEST_TIMEOUT_MS: i64 = 120_000;

/// At most this many connections per listener are served at once; more wait in the
/// listener's backlog (TLS handshakes count) until one closes.
pub const REST_MAX_CONNECTIONS: &str = "rest.max.connections";
pub const DEFAULT_MAX_CONNECTIONS: i64 = 256;

/// The three limits, as the REST listeners apply them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestLimits {
    pub header_read_timeout: Duration,
    pub request_timeout: Duration,
    pub max_connections: usize,
}

impl Default for RestLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_millis(DEFAULT_HEADER_READ_TIMEOUT_MS as u64),
            request_timeout: Duration::from_millis(DEFAULT_REQUEST_TIMEOUT_MS as u64),
            max_connections: DEFAULT_MAX_CONNECTIONS as usize,
        }
    }
}

/// The keys above, each at least 1; errors name the key.
pub(super) fn parse(raw: &BTreeMap<String, String>) -> Result<RestLimits, ConfigError> {
    // Numbers, never secrets: nothing to hide in errors.
    let hidden = std::collections::BTreeSet::new();
    let p = Props {
        raw,
        hidden: &hidden,
    };
    let positive = |key: &'static str, default: i64, max: i64| -> Result<u64, ConfigError> {
        let v = p.long(key, default)?;
        if v < 1 {
            return Err(p.invalid(key, "Value must be at least 1".into()));
        }
        if v > max {
            return Err(p.invalid(key, format!("Value must be no more than {max}")));
        }
        Ok(v as u64)
    };
    Ok(RestLimits {
        header_read_timeout: Duration::from_millis(positive(
            REST_HEADER_READ_TIMEOUT_MS,
            DEFAULT_HEADER_READ_TIMEOUT_MS,
            i64::from(i32::MAX),
        )?),
        request_timeout: Duration::from_millis(positive(
            REST_REQUEST_TIMEOUT_MS,
            DEFAULT_REQUEST_TIMEOUT_MS,
            i64::from(i32::MAX),
        )?),
        max_connections: positive(REST_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS, 65_536)? as usize,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn defaults_and_values() {
        assert_eq!(parse(&raw(&[])).unwrap(), RestLimits::default());
        let l = parse(&raw(&[
            (REST_HEADER_READ_TIMEOUT_MS, "1500"),
            (REST_REQUEST_TIMEOUT_MS, " 2000 "),
            (REST_MAX_CONNECTIONS, "3"),
        ]))
        .unwrap();
        assert_eq!(l.header_read_timeout, Duration::from_millis(1500));
        assert_eq!(l.request_timeout, Duration::from_secs(2));
        assert_eq!(l.max_connections, 3);
    }

    #[test]
    fn bad_values_name_the_key() {
        for (key, value) in [
            (REST_HEADER_READ_TIMEOUT_MS, "0"),
            (REST_REQUEST_TIMEOUT_MS, "soon"),
            (REST_MAX_CONNECTIONS, "-1"),
            (REST_MAX_CONNECTIONS, "1000000"),
        ] {
            let err = parse(&raw(&[(key, value)])).unwrap_err().to_string();
            assert!(err.contains(key), "{err}");
        }
    }
}
