//! Config providers (KIP-297, KIP-421, KIP-887, KIP-993): `${provider:[path:]key}` placeholders
//! in worker and connector configs, resolved by Apache's three built-in providers under their
//! class names.
//!
//! ```properties
//! config.providers=file,dir,env
//! config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
//! config.providers.file.param.allowed.paths=/etc/connect/secrets
//! config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
//! config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
//! config.providers.env.param.allowlist.pattern=^DB_.*
//! ```
//!
//! - `${file:/path/db.properties:password}`: the key `password` of a Java `.properties` file.
//! - `${dir:/path/secrets:password}`: the content of the file `password` in the directory.
//! - `${env:DB_PASSWORD}` (or `${env::DB_PASSWORD}`): an environment variable.
//!
//! The placeholder pattern is Apache's `ConfigTransformer.DEFAULT_PATTERN`. A placeholder
//! naming a provider that is not configured stays as it is (as in Apache). Unlike Apache, a
//! placeholder of a configured provider that finds no value (no such key, a file that cannot
//! be read, a path outside `allowed.paths`) is an error on its key: Apache passes the literal
//! text on and the connector fails later, or worse, uses it.
//!
//! Resolved values are secrets: errors name the key, the provider and the path, never a value.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use regex::Regex;

/// Worker key: the provider names.
pub const CONFIG_PROVIDERS: &str = "config.providers";
pub const FILE_PROVIDER_CLASS: &str = "org.apache.kafka.common.config.provider.FileConfigProvider";
pub const DIRECTORY_PROVIDER_CLASS: &str =
    "org.apache.kafka.common.config.provider.DirectoryConfigProvider";
pub const ENV_VAR_PROVIDER_CLASS: &str =
    "org.apache.kafka.common.config.provider.EnvVarConfigProvider";
/// `param.allowed.paths` of the file and directory providers (KIP-993).
pub const ALLOWED_PATHS: &str = "allowed.paths";
/// `param.allowlist.pattern` of the environment provider (KIP-887).
pub const ALLOWLIST_PATTERN: &str = "allowlist.pattern";

/// Apache's `ConfigTransformer.DEFAULT_PATTERN`.
const PLACEHOLDER: &str = r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}";

/// Why the providers could not be set up or a placeholder not resolved. Never holds a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error(
        "Invalid value for configuration config.providers.{name}.class: the config provider {name} names no class"
    )]
    MissingClass { name: String },
    #[error(
        "Invalid value {class} for configuration config.providers.{name}.class: only {FILE_PROVIDER_CLASS}, {DIRECTORY_PROVIDER_CLASS} and {ENV_VAR_PROVIDER_CLASS} are built in"
    )]
    UnknownClass { name: String, class: String },
    #[error("Invalid value for configuration config.providers.{name}.param.{param}: {reason}")]
    BadParam {
        name: String,
        param: String,
        reason: String,
    },
    #[error("{0}")]
    Unresolved(String),
}

/// Paths a file or directory provider may read (`allowed.paths`); `None` allows every path.
#[derive(Debug, Clone, Default)]
struct AllowedPaths(Option<Vec<PathBuf>>);

/// `Path::normalize` as Java's: `.` dropped, `..` removes the previous component; no access to
/// the file system (symlinks are not followed, as in Apache).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

impl AllowedPaths {
    fn parse(value: Option<&str>) -> Result<Self, String> {
        let Some(value) = value.filter(|v| !v.is_empty()) else {
            return Ok(AllowedPaths(None));
        };
        let mut paths = Vec::new();
        for p in value.split(',') {
            let p = normalize(Path::new(p.trim()));
            if !p.is_absolute() {
                return Err(format!("Path {} is not absolute", p.display()));
            }
            if !p.exists() {
                return Err(format!("Path {} does not exist", p.display()));
            }
            paths.push(p);
        }
        Ok(AllowedPaths(Some(paths)))
    }

    /// Apache's `parseUntrustedPath`: the normalised path when it lies under an allowed one.
    fn check(&self, path: &str) -> Option<PathBuf> {
        match &self.0 {
            None => Some(PathBuf::from(path)),
            Some(allowed) => {
                let p = normalize(Path::new(path));
                allowed.iter().any(|a| p.starts_with(a)).then_some(p)
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Provider {
    File(AllowedPaths),
    Directory(AllowedPaths),
    Env(Regex),
}

impl Provider {
    /// The value of `key` at `path`, or why there is none (no value in the message).
    fn get(&self, path: &str, key: &str) -> Result<String, String> {
        match self {
            Provider::File(allowed) => {
                if path.is_empty() {
                    return Err("the file provider needs a path".to_owned());
                }
                let file = allowed
                    .check(path)
                    .ok_or_else(|| format!("the path {path} is not allowed to be accessed"))?;
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| format!("Could not read properties from file {path}: {e}"))?;
                super::properties::parse(&text)
                    .remove(key)
                    .ok_or_else(|| format!("the file {path} has no key {key}"))
            }
            Provider::Directory(allowed) => {
                if path.is_empty() {
                    return Err("the directory provider needs a path".to_owned());
                }
                let dir = allowed
                    .check(path)
                    .ok_or_else(|| format!("the path {path} is not allowed to be accessed"))?;
                if key.contains('/') || key == ".." || key == "." {
                    return Err(format!("{key} is not a file name"));
                }
                let file = dir.join(key);
                if !file.is_file() {
                    return Err(format!("the directory {path} has no file {key}"));
                }
                std::fs::read_to_string(&file).map_err(|e| {
                    format!(
                        "Could not read file {} for property {key}: {e}",
                        file.display()
                    )
                })
            }
            Provider::Env(allow) => {
                if !path.is_empty() {
                    return Err(format!(
                        "Path is not supported for EnvVarConfigProvider, invalid value '{path}'"
                    ));
                }
                if !allow.is_match(key) {
                    return Err(format!(
                        "the environment variable {key} does not match {ALLOWLIST_PATTERN}"
                    ));
                }
                std::env::var(key).map_err(|_| format!("the environment variable {key} is not set"))
            }
        }
    }
}

/// The configured providers of a worker.
#[derive(Debug, Clone, Default)]
pub struct ConfigProviders {
    providers: BTreeMap<String, Provider>,
}

/// One `${provider:[path:]key}` in a value.
struct Placeholder<'a> {
    whole: std::ops::Range<usize>,
    provider: &'a str,
    path: &'a str,
    key: &'a str,
}

fn placeholders(value: &str) -> impl Iterator<Item = Placeholder<'_>> {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(PLACEHOLDER).expect("Apache's pattern compiles"));
    re.captures_iter(value).map(|c| Placeholder {
        whole: c.get(0).expect("group 0").range(),
        provider: c.get(1).map_or("", |m| m.as_str()),
        path: c.get(3).map_or("", |m| m.as_str()),
        key: c.get(4).map_or("", |m| m.as_str()),
    })
}

impl ConfigProviders {
    /// The providers named by `config.providers` in a worker's raw properties.
    pub fn from_worker_config(raw: &BTreeMap<String, String>) -> Result<Self, ProviderError> {
        let mut providers = BTreeMap::new();
        let names = raw.get(CONFIG_PROVIDERS).map(String::as_str).unwrap_or("");
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let class = raw
                .get(&format!("{CONFIG_PROVIDERS}.{name}.class"))
                .map(|c| c.trim())
                .filter(|c| !c.is_empty())
                .ok_or_else(|| ProviderError::MissingClass {
                    name: name.to_owned(),
                })?;
            let param = |p: &str| {
                raw.get(&format!("{CONFIG_PROVIDERS}.{name}.param.{p}"))
                    .map(String::as_str)
            };
            let bad = |param: &str, reason: String| ProviderError::BadParam {
                name: name.to_owned(),
                param: param.to_owned(),
                reason,
            };
            let simple = class.rsplit('.').next().unwrap_or(class);
            let provider = match simple {
                "FileConfigProvider" | "DirectoryConfigProvider" => {
                    let allowed = AllowedPaths::parse(param(ALLOWED_PATHS))
                        .map_err(|e| bad(ALLOWED_PATHS, e))?;
                    if simple == "FileConfigProvider" {
                        Provider::File(allowed)
                    } else {
                        Provider::Directory(allowed)
                    }
                }
                "EnvVarConfigProvider" => {
                    let pattern = param(ALLOWLIST_PATTERN).unwrap_or(".*");
                    // Java's `Matcher.matches`: the whole name.
                    let re = Regex::new(&format!("^(?:{pattern})$"))
                        .map_err(|e| bad(ALLOWLIST_PATTERN, e.to_string()))?;
                    Provider::Env(re)
                }
                _ => {
                    return Err(ProviderError::UnknownClass {
                        name: name.to_owned(),
                        class: class.to_owned(),
                    });
                }
            };
            providers.insert(name.to_owned(), provider);
        }
        Ok(ConfigProviders { providers })
    }

    pub fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }

    /// `value` with every placeholder of a configured provider replaced; the error says which
    /// placeholder found no value (for `key`), never a value.
    pub fn resolve(&self, key: &str, value: &str) -> Result<String, ProviderError> {
        let mut out = String::with_capacity(value.len());
        let mut last = 0;
        for p in placeholders(value) {
            let Some(provider) = self.providers.get(p.provider) else {
                continue;
            };
            let resolved = provider.get(p.path, p.key).map_err(|reason| {
                ProviderError::Unresolved(format!(
                    "Invalid value for configuration {key}: the placeholder {} cannot be resolved: {reason}",
                    &value[p.whole.clone()]
                ))
            })?;
            out.push_str(&value[last..p.whole.start]);
            out.push_str(&resolved);
            last = p.whole.end;
        }
        out.push_str(&value[last..]);
        Ok(out)
    }

    /// Every value of `config` resolved; the first failure is returned.
    pub fn transform(
        &self,
        config: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, ProviderError> {
        config
            .iter()
            .map(|(k, v)| Ok((k.clone(), self.resolve(k, v)?)))
            .collect()
    }

    /// `(key, message)` for each key whose placeholders cannot all be resolved, for validation.
    pub fn unresolved(&self, config: &BTreeMap<String, String>) -> Vec<(String, String)> {
        config
            .iter()
            .filter_map(|(k, v)| self.resolve(k, v).err().map(|e| (k.clone(), e.to_string())))
            .collect()
    }

    /// Apache's `AbstractHerder.reverseTransform`: in task configs a connector derived from its
    /// resolved config, every key whose value in the raw connector config holds a placeholder
    /// gets that raw value back, so no resolved secret is written to the config topic.
    pub fn restore_placeholders(
        raw_connector_config: &BTreeMap<String, String>,
        task_configs: &mut [BTreeMap<String, String>],
    ) {
        let keys: Vec<(&String, &String)> = raw_connector_config
            .iter()
            .filter(|(_, v)| placeholders(v).next().is_some())
            .collect();
        for task in task_configs {
            for (k, raw) in &keys {
                if let Some(v) = task.get_mut(*k) {
                    v.clone_from(raw);
                }
            }
        }
    }

    /// Whether `value` holds a placeholder of a configured provider (a secret once resolved).
    pub fn has_placeholder(&self, value: &str) -> bool {
        placeholders(value).any(|p| self.providers.contains_key(p.provider))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn providers(props: &[(&str, &str)]) -> Result<ConfigProviders, ProviderError> {
        ConfigProviders::from_worker_config(
            &props
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("providers-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn file_directory_and_env_placeholders_resolve() {
        let d = scratch("resolve");
        std::fs::write(d.join("db.properties"), "user=app\npassword=s3cr\\=t\n").unwrap();
        std::fs::create_dir_all(d.join("secrets")).unwrap();
        std::fs::write(d.join("secrets/token"), "tok").unwrap();
        // An environment variable every test process has (`set_var` is unsafe in edition 2024).
        let var = "PATH";
        let val = std::env::var(var).unwrap_or_default();
        let p = providers(&[
            ("config.providers", "file, dir,env"),
            ("config.providers.file.class", FILE_PROVIDER_CLASS),
            ("config.providers.dir.class", "DirectoryConfigProvider"),
            ("config.providers.env.class", ENV_VAR_PROVIDER_CLASS),
        ])
        .unwrap();
        let f = d.join("db.properties");
        let f = f.display();
        assert_eq!(
            p.resolve(
                "k",
                &format!("u=${{file:{f}:user}} p=${{file:{f}:password}}")
            )
            .unwrap(),
            "u=app p=s3cr=t"
        );
        let s = d.join("secrets");
        assert_eq!(
            p.resolve("k", &format!("${{dir:{}:token}}", s.display()))
                .unwrap(),
            "tok"
        );
        assert_eq!(p.resolve("k", &format!("${{env:{var}}}")).unwrap(), val);
        assert_eq!(p.resolve("k", &format!("${{env::{var}}}")).unwrap(), val);
        // Unknown providers and text without a colon stay as they are.
        assert_eq!(
            p.resolve("k", "${vault:x:y} ${topic}-${timestamp}")
                .unwrap(),
            "${vault:x:y} ${topic}-${timestamp}"
        );
    }

    #[test]
    fn unresolvable_placeholders_are_errors_without_values() {
        let d = scratch("errors");
        std::fs::write(d.join("db.properties"), "password=hunter2\n").unwrap();
        let allowed = d.join("allowed");
        std::fs::create_dir_all(&allowed).unwrap();
        let p = providers(&[
            ("config.providers", "file,env"),
            ("config.providers.file.class", FILE_PROVIDER_CLASS),
            (
                "config.providers.file.param.allowed.paths",
                allowed.to_str().unwrap(),
            ),
            ("config.providers.env.class", ENV_VAR_PROVIDER_CLASS),
            ("config.providers.env.param.allowlist.pattern", "DB_.*"),
        ])
        .unwrap();
        let f = d.join("db.properties");
        let e = p
            .resolve(
                "connection.password",
                &format!("${{file:{}:password}}", f.display()),
            )
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("connection.password") && e.contains("not allowed"),
            "{e}"
        );
        assert!(!e.contains("hunter2"), "{e}");
        // `..` cannot climb out of an allowed path.
        let escape = format!("{}/../db.properties", allowed.display());
        assert!(
            p.resolve("k", &format!("${{file:{escape}:password}}"))
                .is_err()
        );
        let missing = format!("${{file:{}/nope.properties:password}}", allowed.display());
        assert!(p.resolve("k", &missing).is_err());
        assert!(
            p.resolve("k", "${env:PATH}")
                .unwrap_err()
                .to_string()
                .contains("allowlist.pattern")
        );
        assert!(
            p.resolve("k", "${env:/x:DB_A}")
                .unwrap_err()
                .to_string()
                .contains("Path is not supported")
        );
        let bad = p.unresolved(
            &[
                ("a".to_string(), "${env:DB_NOT_SET_ANYWHERE}".to_string()),
                ("b".to_string(), "plain".to_string()),
            ]
            .into_iter()
            .collect(),
        );
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].0, "a");
    }

    #[test]
    fn provider_settings_are_checked() {
        assert!(matches!(
            providers(&[("config.providers", "x")]),
            Err(ProviderError::MissingClass { .. })
        ));
        assert!(matches!(
            providers(&[
                ("config.providers", "x"),
                (
                    "config.providers.x.class",
                    "com.example.VaultConfigProvider"
                )
            ]),
            Err(ProviderError::UnknownClass { .. })
        ));
        let e = providers(&[
            ("config.providers", "file"),
            ("config.providers.file.class", FILE_PROVIDER_CLASS),
            ("config.providers.file.param.allowed.paths", "relative/dir"),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("is not absolute"), "{e}");
        assert!(providers(&[]).unwrap().is_empty());
    }

    #[test]
    fn task_configs_get_the_connector_placeholders_back() {
        let raw: BTreeMap<String, String> = [
            ("connection.password", "${file:/s/db.properties:password}"),
            ("topic", "plain"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut tasks = vec![
            [
                ("connection.password", "s3cret"),
                ("topic", "plain"),
                ("task.id", "0"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
        ];
        ConfigProviders::restore_placeholders(&raw, &mut tasks);
        assert_eq!(
            tasks[0]["connection.password"],
            "${file:/s/db.properties:password}"
        );
        assert_eq!(tasks[0]["topic"], "plain");
        assert_eq!(tasks[0]["task.id"], "0");
    }
}
