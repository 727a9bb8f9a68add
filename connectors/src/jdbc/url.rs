//! `connection.url` of the Postgres connectors, with TLS as the client the URL's form belongs to:
//!
//! - libpq URLs (`postgres://` and `postgresql://`): `sslmode` (default `prefer`, or
//!   `PGSSLMODE`), `sslrootcert` (default `PGSSLROOTCERT`, else `~/.postgresql/root.crt` when it
//!   exists; `system` for the bundled public roots, only with `verify-full`). As in libpq,
//!   `require` with a root certificate verifies the chain (`verify-ca`).
//! - pgJDBC URLs (`jdbc:postgresql://host:port/db?...`): `sslmode` (default `prefer`; `ssl=true`
//!   without `sslmode` is `verify-full`), `sslrootcert` (default `~/.postgresql/root.crt`); as in
//!   pgJDBC, `require` never verifies the certificate. `ApplicationName` and `currentSchema` are
//!   pgJDBC's names for `application_name` and the search path.
//!
//! `verify-ca` and `verify-full` without a root certificate, a named root certificate that does
//! not exist, `sslmode=allow`, and a parameter nothing here applies are configuration errors:
//! nothing in the URL is silently ignored or made weaker.

use std::path::PathBuf;
use std::str::FromStr;

use connect_api::error::{ConnectError, Result};
use sqlx::postgres::{PgConnectOptions, PgSslMode};

/// URL parameters.
pub const SSLMODE_PARAM: &str = "sslmode";
pub const SSLROOTCERT_PARAM: &str = "sslrootcert";
/// pgJDBC: `ssl=true` (or empty) without `sslmode` means `verify-full`.
pub const JDBC_SSL_PARAM: &str = "ssl";
/// The root certificate libpq and pgJDBC read when the URL names none (below `$HOME`).
pub const DEFAULT_ROOT_CERT: &str = ".postgresql/root.crt";

/// Parameters passed on to sqlx as they are (libpq names).
const LIBPQ_PASSTHROUGH: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "application_name",
    "options",
    "sslcert",
    "sslkey",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Libpq,
    Jdbc,
}

/// A parsed `connection.url`: what sqlx connects with, and the TLS it was asked for.
#[derive(Debug, Clone)]
pub struct PgUrl {
    pub options: PgConnectOptions,
    /// The effective mode (libpq's `require` with a root certificate is `VerifyCa`).
    pub ssl_mode: PgSslMode,
    /// The CA file the server's certificate is checked against (`None`: no check, or `system`).
    pub root_cert: Option<PathBuf>,
}

impl PgUrl {
    /// `sslmode=<mode>` as written in URLs, for messages.
    pub fn ssl_mode_name(&self) -> &'static str {
        mode_name(self.ssl_mode)
    }

    /// `host:port`, for messages.
    pub fn address(&self) -> String {
        format!("{}:{}", self.options.get_host(), self.options.get_port())
    }
}

fn mode_name(m: PgSslMode) -> &'static str {
    match m {
        PgSslMode::Disable => "disable",
        PgSslMode::Allow => "allow",
        PgSslMode::Prefer => "prefer",
        PgSslMode::Require => "require",
        PgSslMode::VerifyCa => "verify-ca",
        PgSslMode::VerifyFull => "verify-full",
    }
}

fn bad(message: impl std::fmt::Display) -> ConnectError {
    ConnectError::config(format!("invalid connection.url for Postgres: {message}"))
}

fn parse_mode(v: &str) -> Result<PgSslMode> {
    match v {
        "disable" => Ok(PgSslMode::Disable),
        "prefer" => Ok(PgSslMode::Prefer),
        "require" => Ok(PgSslMode::Require),
        "verify-ca" => Ok(PgSslMode::VerifyCa),
        "verify-full" => Ok(PgSslMode::VerifyFull),
        "allow" => Err(bad(
            "sslmode=allow is not supported (it would try plaintext first); use prefer, require or disable",
        )),
        other => Err(bad(format!(
            "unknown sslmode {other:?} (disable, prefer, require, verify-ca or verify-full)"
        ))),
    }
}

/// Parses `connection.url`; `env` reads an environment variable (`PGSSLMODE`, `PGSSLROOTCERT`,
/// `HOME`), a parameter so tests do not depend on the process environment.
pub fn parse_with(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<PgUrl> {
    let (dialect, libpq_form) = if let Some(rest) = url.strip_prefix("jdbc:postgresql:") {
        if !rest.starts_with("//") {
            return Err(bad(
                "a pgJDBC URL needs a host: jdbc:postgresql://host:port/database",
            ));
        }
        (Dialect::Jdbc, format!("postgresql:{rest}"))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        (Dialect::Libpq, url.to_owned())
    } else {
        return Err(bad(
            "it must start with postgres://, postgresql:// or jdbc:postgresql://",
        ));
    };
    let mut parsed = url::Url::parse(&libpq_form).map_err(bad)?;

    let mut mode = None;
    let mut root_cert = None;
    let mut jdbc_ssl = None;
    let mut pass = Vec::new();
    let mut search_path = None;
    for (k, v) in parsed.query_pairs() {
        let (k, v) = (k.into_owned(), v.into_owned());
        match (dialect, k.as_str()) {
            (_, SSLMODE_PARAM) => mode = Some(parse_mode(&v)?),
            (_, SSLROOTCERT_PARAM) => root_cert = Some(v),
            (Dialect::Jdbc, JDBC_SSL_PARAM) => jdbc_ssl = Some(v),
            (Dialect::Jdbc, "ApplicationName") => pass.push(("application_name".to_owned(), v)),
            (Dialect::Jdbc, "currentSchema") => search_path = Some(v),
            (Dialect::Jdbc, "user" | "password") => pass.push((k, v)),
            (Dialect::Libpq, k) if LIBPQ_PASSTHROUGH.contains(&k) => pass.push((k.to_owned(), v)),
            (_, other) => {
                return Err(bad(format!(
                    "parameter {other:?} is not supported by this connector"
                )));
            }
        }
    }
    parsed.set_query(None);
    if !pass.is_empty() {
        parsed.query_pairs_mut().extend_pairs(&pass);
    }
    let mut options = PgConnectOptions::from_str(parsed.as_str()).map_err(bad)?;
    if let Some(schema) = search_path {
        options = options.options([("search_path", schema.as_str())]);
    }

    let mode = match (mode, dialect) {
        (Some(m), _) => m,
        (None, Dialect::Libpq) => match env("PGSSLMODE") {
            Some(m) => parse_mode(&m)?,
            None => PgSslMode::Prefer,
        },
        (None, Dialect::Jdbc) => match jdbc_ssl.as_deref() {
            Some("true" | "") => PgSslMode::VerifyFull,
            Some("false") | None => PgSslMode::Prefer,
            Some(other) => return Err(bad(format!("ssl={other:?} is not true or false"))),
        },
    };
    let named = match (root_cert, dialect) {
        (Some(r), _) => Some(r),
        (None, Dialect::Libpq) => env("PGSSLROOTCERT"),
        (None, Dialect::Jdbc) => None,
    };
    let verifies = matches!(mode, PgSslMode::VerifyCa | PgSslMode::VerifyFull);
    let root_cert: Option<PathBuf> = match named.as_deref() {
        Some("system") => {
            if !matches!(mode, PgSslMode::VerifyFull) {
                return Err(bad(format!(
                    "sslrootcert=system needs sslmode=verify-full, not {}",
                    mode_name(mode)
                )));
            }
            None
        }
        Some(path) => {
            if !std::path::Path::new(path).is_file() && !matches!(mode, PgSslMode::Disable) {
                return Err(bad(format!("sslrootcert {path} does not exist")));
            }
            Some(path.into())
        }
        None => env("HOME")
            .map(|h| PathBuf::from(h).join(DEFAULT_ROOT_CERT))
            .filter(|p| p.is_file()),
    };
    if verifies && root_cert.is_none() && named.as_deref() != Some("system") {
        return Err(bad(format!(
            "sslmode={} needs a root certificate to check the server's: sslrootcert=<CA file> (or ~/{DEFAULT_ROOT_CERT})",
            mode_name(mode)
        )));
    }
    // libpq: "if a root CA file exists, sslmode=require behaves as verify-ca"; pgJDBC does not.
    let mode =
        if matches!(mode, PgSslMode::Require) && dialect == Dialect::Libpq && root_cert.is_some() {
            PgSslMode::VerifyCa
        } else {
            mode
        };
    options = options.ssl_mode(mode);
    if let Some(r) = &root_cert {
        options = options.ssl_root_cert(r);
    }
    Ok(PgUrl {
        options,
        ssl_mode: mode,
        root_cert,
    })
}

/// [`parse_with`] the process environment.
pub fn parse(url: &str) -> Result<PgUrl> {
    parse_with(url, &|k| std::env::var(k).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn ca_file() -> (tempfile_dir::Dir, String) {
        let d = tempfile_dir::Dir::new();
        let p = d.0.join("ca.pem");
        std::fs::write(&p, "not read at parse time").unwrap();
        let s = p.to_string_lossy().into_owned();
        (d, s)
    }

    /// A scratch directory removed on drop (std only).
    mod tempfile_dir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Self {
                static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
                let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let p = std::env::temp_dir().join(format!("pgurl-{}-{n}", std::process::id()));
                std::fs::create_dir_all(&p).unwrap();
                Self(p)
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn default_mode_is_prefer_for_both_forms() {
        let u = parse_with("postgres://u@h:5432/db", &no_env).unwrap();
        assert_eq!(u.ssl_mode_name(), "prefer");
        let j = parse_with("jdbc:postgresql://h:5432/db?user=u", &no_env).unwrap();
        assert_eq!(j.ssl_mode_name(), "prefer");
        assert_eq!(j.options.get_username(), "u");
        assert_eq!(j.address(), "h:5432");
        assert_eq!(j.options.get_database(), Some("db"));
    }

    #[test]
    fn every_mode_is_read_and_allow_or_unknown_is_an_error() {
        for name in ["disable", "prefer", "require"] {
            let u = parse_with(&format!("postgres://h/db?sslmode={name}"), &no_env).unwrap();
            assert_eq!(u.ssl_mode_name(), name);
        }
        let e = parse_with("postgres://h/db?sslmode=allow", &no_env).unwrap_err();
        assert!(e.to_string().contains("sslmode=allow"), "{e}");
        let e = parse_with("postgres://h/db?sslmode=strict", &no_env).unwrap_err();
        assert!(e.to_string().contains("unknown sslmode"), "{e}");
    }

    #[test]
    fn verify_modes_need_a_root_certificate_that_exists() {
        for mode in ["verify-ca", "verify-full"] {
            let e = parse_with(&format!("postgres://h/db?sslmode={mode}"), &no_env).unwrap_err();
            assert!(e.to_string().contains("needs a root certificate"), "{e}");
            let e = parse_with(
                &format!("jdbc:postgresql://h/db?sslmode={mode}&sslrootcert=/nonexistent/ca.pem"),
                &no_env,
            )
            .unwrap_err();
            assert!(
                e.to_string().contains("/nonexistent/ca.pem does not exist"),
                "{e}"
            );
        }
        let (_d, ca) = ca_file();
        let u = parse_with(
            &format!("postgres://h/db?sslmode=verify-full&sslrootcert={ca}"),
            &no_env,
        )
        .unwrap();
        assert_eq!(u.ssl_mode_name(), "verify-full");
        assert_eq!(u.root_cert, Some(PathBuf::from(&ca)));
    }

    #[test]
    fn the_default_root_certificate_is_home_postgresql_root_crt() {
        let d = tempfile_dir::Dir::new();
        std::fs::create_dir_all(d.0.join(".postgresql")).unwrap();
        std::fs::write(d.0.join(DEFAULT_ROOT_CERT), "x").unwrap();
        let home = d.0.to_string_lossy().into_owned();
        let env = |k: &str| (k == "HOME").then(|| home.clone());
        let u = parse_with("jdbc:postgresql://h/db?sslmode=verify-ca", &env).unwrap();
        assert_eq!(u.root_cert, Some(d.0.join(DEFAULT_ROOT_CERT)));
        // libpq: require with a root certificate present verifies the chain.
        let u = parse_with("postgres://h/db?sslmode=require", &env).unwrap();
        assert_eq!(u.ssl_mode_name(), "verify-ca");
    }

    #[test]
    fn require_with_a_root_certificate_is_verify_ca_in_libpq_only() {
        let (_d, ca) = ca_file();
        let u = parse_with(
            &format!("postgresql://h/db?sslmode=require&sslrootcert={ca}"),
            &no_env,
        )
        .unwrap();
        assert_eq!(u.ssl_mode_name(), "verify-ca");
        let j = parse_with(
            &format!("jdbc:postgresql://h/db?sslmode=require&sslrootcert={ca}"),
            &no_env,
        )
        .unwrap();
        assert_eq!(j.ssl_mode_name(), "require");
    }

    #[test]
    fn jdbc_ssl_true_is_verify_full_and_sslmode_wins() {
        let (_d, ca) = ca_file();
        let j = parse_with(
            &format!("jdbc:postgresql://h/db?ssl=true&sslrootcert={ca}"),
            &no_env,
        )
        .unwrap();
        assert_eq!(j.ssl_mode_name(), "verify-full");
        let j = parse_with("jdbc:postgresql://h/db?ssl=true&sslmode=require", &no_env).unwrap();
        assert_eq!(j.ssl_mode_name(), "require");
        let e = parse_with("jdbc:postgresql://h/db?ssl=true", &no_env).unwrap_err();
        assert!(e.to_string().contains("needs a root certificate"), "{e}");
    }

    #[test]
    fn pgsslmode_applies_to_libpq_urls_only() {
        let env = |k: &str| (k == "PGSSLMODE").then(|| "disable".to_owned());
        let u = parse_with("postgres://h/db", &env).unwrap();
        assert_eq!(u.ssl_mode_name(), "disable");
        let j = parse_with("jdbc:postgresql://h/db", &env).unwrap();
        assert_eq!(j.ssl_mode_name(), "prefer");
    }

    #[test]
    fn system_roots_only_with_verify_full() {
        let u = parse_with(
            "postgres://h/db?sslmode=verify-full&sslrootcert=system",
            &no_env,
        )
        .unwrap();
        assert_eq!(u.root_cert, None);
        let e = parse_with(
            "postgres://h/db?sslmode=require&sslrootcert=system",
            &no_env,
        )
        .unwrap_err();
        assert!(e.to_string().contains("verify-full"), "{e}");
    }

    #[test]
    fn unknown_parameters_and_other_schemes_are_errors() {
        let e =
            parse_with("postgres://h/db?sslmode=require&sslcompression=1", &no_env).unwrap_err();
        assert!(e.to_string().contains("\"sslcompression\""), "{e}");
        // pgJDBC's name in a libpq URL, and a libpq name in a pgJDBC URL.
        assert!(parse_with("postgres://h/db?ApplicationName=x", &no_env).is_err());
        assert!(parse_with("jdbc:postgresql://h/db?application_name=x", &no_env).is_err());
        assert!(parse_with("mysql://h/db", &no_env).is_err());
        assert!(parse_with("jdbc:postgresql:db", &no_env).is_err());
    }

    #[test]
    fn application_name_and_current_schema() {
        let u = parse_with("postgres://h/db?application_name=a1", &no_env).unwrap();
        assert_eq!(u.options.get_application_name(), Some("a1"));
        let j = parse_with(
            "jdbc:postgresql://h/db?ApplicationName=a2&currentSchema=s1",
            &no_env,
        )
        .unwrap();
        assert_eq!(j.options.get_application_name(), Some("a2"));
        assert!(
            j.options
                .get_options()
                .is_some_and(|o| o.contains("search_path=s1")),
            "{:?}",
            j.options.get_options()
        );
    }
}
