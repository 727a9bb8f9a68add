//! HTTP basic authentication compatible with Apache's `BasicAuthSecurityRestExtension`: the
//! users and passwords of the `PropertyFileLoginModule` file named by the
//! `KafkaConnect` entry of a JAAS file, which deployments point to with
//! `-Djava.security.auth.login.config=<path>` in `KAFKA_OPTS`.
//!
//! ```text
//! KafkaConnect {
//!   org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
//!   file="/etc/connect/credentials.properties";
//! };
//! ```
//!
//! It is on when `rest.extension.classes` names the extension (the JAAS file then comes from
//! `KAFKA_OPTS`, or from our key `rest.basic.auth.jaas.file`), or when our key alone is set.
//! Any other extension class stops start-up: the worker never runs open when the operator
//! asked for protection. The REST layer applies it (`rest::require_basic_auth`).
//!
//! As in Apache, the two internal endpoints (`POST /connectors/{c}/tasks`,
//! `PUT /connectors/{c}/fence`) are let through: they are signed with the session key instead.
//! Unlike Apache, an empty credentials file is an error (Apache then lets every request in).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

/// Apache's extension class, the one value of `rest.extension.classes` this worker implements.
pub const BASIC_AUTH_EXTENSION_CLASS: &str =
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension";
/// The JAAS login module the extension uses.
pub const PROPERTY_FILE_LOGIN_MODULE: &str =
    "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule";
/// The JAAS entry Apache's filter logs in with.
pub const JAAS_ENTRY: &str = "KafkaConnect";
/// The JVM property deployments set in `KAFKA_OPTS`.
pub const JAAS_SYSTEM_PROPERTY: &str = "java.security.auth.login.config";

/// The JAAS file named by `-Djava.security.auth.login.config=...` in `KAFKA_OPTS`.
pub fn jaas_path_from_kafka_opts(kafka_opts: &str) -> Option<PathBuf> {
    let flag = format!("-D{JAAS_SYSTEM_PROPERTY}=");
    kafka_opts
        .split_whitespace()
        .find_map(|arg| arg.strip_prefix(&flag))
        .map(|p| PathBuf::from(p.trim_matches(|c| c == '"' || c == '\'')))
}

/// A worker-config error: the key, its value, the reason.
pub type KeyError = (&'static str, String, String);

/// The credentials REST requests must present, from `rest.extension.classes`, our
/// `rest.basic.auth.jaas.file` and the `KAFKA_OPTS` environment variable; `None` when neither
/// key asks for authentication.
pub fn from_worker_config(
    extension_classes: Option<&str>,
    jaas_file: Option<&str>,
    kafka_opts: Option<&str>,
) -> Result<Option<Credentials>, KeyError> {
    use super::{REST_BASIC_AUTH_JAAS_FILE, REST_EXTENSION_CLASSES};
    let classes = extension_classes.unwrap_or("");
    let mut basic = false;
    for class in classes.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        if class == BASIC_AUTH_EXTENSION_CLASS || class == "BasicAuthSecurityRestExtension" {
            basic = true;
        } else {
            return Err((
                REST_EXTENSION_CLASSES,
                classes.to_owned(),
                format!(
                    "the REST extension {class} is not available in this worker (only {BASIC_AUTH_EXTENSION_CLASS} is); refusing to start without it"
                ),
            ));
        }
    }
    let (key, value, path) = match (jaas_file, basic) {
        (Some(file), _) => (
            REST_BASIC_AUTH_JAAS_FILE,
            file.to_owned(),
            PathBuf::from(file),
        ),
        (None, false) => return Ok(None),
        (None, true) => {
            let path = kafka_opts.and_then(jaas_path_from_kafka_opts).ok_or_else(|| {
                (
                    REST_EXTENSION_CLASSES,
                    classes.to_owned(),
                    format!(
                        "{BASIC_AUTH_EXTENSION_CLASS} needs a JAAS file: set -D{JAAS_SYSTEM_PROPERTY}=<path> in the KAFKA_OPTS environment variable, or {REST_BASIC_AUTH_JAAS_FILE}"
                    ),
                )
            })?;
            (REST_EXTENSION_CLASSES, classes.to_owned(), path)
        }
    };
    Credentials::load(&path)
        .map(Some)
        .map_err(|reason| (key, value, reason))
}

/// The credentials file of the `KafkaConnect` entry of a JAAS file.
pub fn credentials_file(jaas: &str) -> Result<PathBuf, String> {
    let start = jaas
        .find(JAAS_ENTRY)
        .ok_or_else(|| format!("the JAAS file has no {JAAS_ENTRY} entry"))?;
    let rest = &jaas[start + JAAS_ENTRY.len()..];
    let open = rest
        .find('{')
        .ok_or_else(|| format!("the {JAAS_ENTRY} entry has no body"))?;
    let close = rest[open..]
        .find("};")
        .ok_or_else(|| format!("the {JAAS_ENTRY} entry is not closed with '}};'"))?;
    let body = &rest[open + 1..open + close];
    if !body.contains(PROPERTY_FILE_LOGIN_MODULE) {
        return Err(format!(
            "the {JAAS_ENTRY} entry does not use {PROPERTY_FILE_LOGIN_MODULE}, the only login module this worker implements"
        ));
    }
    let at = body
        .find("file=")
        .ok_or_else(|| format!("{PROPERTY_FILE_LOGIN_MODULE} needs a file=\"...\" option"))?;
    let value = body[at + "file=".len()..].trim_start();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.find('"').map(|end| &v[..end]))
        .ok_or_else(|| "the file option must be a quoted path".to_owned())?;
    if value.trim().is_empty() {
        return Err("Property Credentials file must be specified".to_owned());
    }
    Ok(PathBuf::from(value))
}

/// Users and passwords (a Java `.properties` file: `user=password`).
#[derive(Clone)]
pub struct Credentials {
    users: BTreeMap<String, String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("users", &self.users.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Equality whose time does not depend on where two equally long inputs differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

impl Credentials {
    /// The credentials of the JAAS file at `jaas_path`.
    pub fn load(jaas_path: &Path) -> Result<Self, String> {
        let jaas = std::fs::read_to_string(jaas_path)
            .map_err(|e| format!("cannot read the JAAS file {}: {e}", jaas_path.display()))?;
        let file = credentials_file(&jaas)?;
        let text = std::fs::read_to_string(&file).map_err(|e| {
            format!(
                "Error loading Property Credentials file {}: {e}",
                file.display()
            )
        })?;
        let users = crate::config::properties::parse(&text);
        if users.is_empty() {
            return Err(format!(
                "the credentials file {} is empty (Apache would let every request in; this worker refuses to run unprotected)",
                file.display()
            ));
        }
        Ok(Credentials { users })
    }

    /// Whether an `Authorization` header holds a known user with the right password.
    pub fn check(&self, authorization: Option<&str>) -> bool {
        let Some((user, password)) = authorization.and_then(basic_credentials) else {
            return false;
        };
        match self.users.get(&user) {
            Some(expected) => constant_time_eq(expected.as_bytes(), password.as_bytes()),
            // Compare anyway, so an unknown user takes as long as a wrong password.
            None => {
                let _ = constant_time_eq(password.as_bytes(), password.as_bytes());
                false
            }
        }
    }
}

/// `(user, password)` of a `Basic` header value.
fn basic_credentials(header: &str) -> Option<(String, String)> {
    let (scheme, encoded) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(BASE64.decode(encoded.trim()).ok()?).ok()?;
    let (user, password) = decoded.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

/// Apache's `INTERNAL_REQUEST_MATCHERS`: the signed worker-to-worker endpoints.
pub fn is_internal_request(method: &str, path: &str) -> bool {
    let path = path.trim_start_matches('/').trim_end_matches('/');
    let parts: Vec<&str> = path.split('/').collect();
    matches!(
        (method, parts.as_slice()),
        ("POST", ["connectors", c, "tasks"]) | ("PUT", ["connectors", c, "fence"]) if !c.is_empty()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jaas_file_comes_from_kafka_opts() {
        assert_eq!(
            jaas_path_from_kafka_opts(
                "-Xmx1g -Djava.security.auth.login.config=/etc/connect/jaas.conf -Dx=y"
            ),
            Some(PathBuf::from("/etc/connect/jaas.conf"))
        );
        assert_eq!(jaas_path_from_kafka_opts("-Xmx1g"), None);
    }

    #[test]
    fn the_credentials_file_comes_from_the_kafka_connect_entry() {
        let jaas = r#"
            KafkaServer { x required; };
            KafkaConnect {
              org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
              file="/etc/connect/credentials.properties";
            };"#;
        assert_eq!(
            credentials_file(jaas).unwrap(),
            PathBuf::from("/etc/connect/credentials.properties")
        );
        assert!(credentials_file("KafkaServer { x required; };").is_err());
        assert!(
            credentials_file("KafkaConnect { com.example.Ldap required file=\"/x\"; };")
                .unwrap_err()
                .contains("PropertyFileLoginModule")
        );
    }

    #[test]
    fn basic_credentials_are_checked() {
        let c = Credentials {
            users: [("alice".to_owned(), "s3cret".to_owned())].into(),
        };
        let header = |u: &str, p: &str| format!("Basic {}", BASE64.encode(format!("{u}:{p}")));
        assert!(c.check(Some(&header("alice", "s3cret"))));
        assert!(!c.check(Some(&header("alice", "wrong"))));
        assert!(!c.check(Some(&header("bob", "s3cret"))));
        assert!(!c.check(Some("Bearer abc")));
        assert!(!c.check(None));
        assert!(!format!("{c:?}").contains("s3cret"));
    }

    #[test]
    fn only_the_two_internal_endpoints_skip_authentication() {
        assert!(is_internal_request("POST", "/connectors/a/tasks"));
        assert!(is_internal_request("PUT", "/connectors/a/fence/"));
        assert!(!is_internal_request("GET", "/connectors/a/tasks"));
        assert!(!is_internal_request("POST", "/connectors"));
        assert!(!is_internal_request("PUT", "/connectors/a/config"));
    }

    #[test]
    fn the_worker_keys_turn_authentication_on_or_stop_start_up() {
        assert!(from_worker_config(None, None, None).unwrap().is_none());
        assert!(
            from_worker_config(Some(" "), None, Some("-Xmx1g"))
                .unwrap()
                .is_none()
        );
        let (key, _, reason) =
            from_worker_config(Some("com.example.MyExtension"), None, None).unwrap_err();
        assert_eq!(key, "rest.extension.classes");
        assert!(reason.contains("com.example.MyExtension"), "{reason}");
        let (key, _, reason) =
            from_worker_config(Some(BASIC_AUTH_EXTENSION_CLASS), None, Some("-Xmx1g")).unwrap_err();
        assert_eq!(key, "rest.extension.classes");
        assert!(reason.contains("KAFKA_OPTS"), "{reason}");

        let dir = std::env::temp_dir().join(format!("rest-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let creds = dir.join("creds.properties");
        std::fs::write(&creds, "alice=s3cret\n").unwrap();
        let jaas = dir.join("jaas.conf");
        std::fs::write(
            &jaas,
            format!(
                "KafkaConnect {{ {PROPERTY_FILE_LOGIN_MODULE} required file=\"{}\"; }};",
                creds.display()
            ),
        )
        .unwrap();
        let opts = format!("-D{JAAS_SYSTEM_PROPERTY}={}", jaas.display());
        let header = format!("Basic {}", BASE64.encode("alice:s3cret"));
        let from_opts = from_worker_config(Some(BASIC_AUTH_EXTENSION_CLASS), None, Some(&opts))
            .unwrap()
            .expect("on");
        assert!(from_opts.check(Some(&header)));
        let from_key = from_worker_config(None, Some(jaas.to_str().unwrap()), None)
            .unwrap()
            .expect("on");
        assert!(from_key.check(Some(&header)));
        let (key, _, _) =
            from_worker_config(None, Some("/nonexistent/jaas.conf"), None).unwrap_err();
        assert_eq!(key, "rest.basic.auth.jaas.file");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
