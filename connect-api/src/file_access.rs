//! Which local directories the worker lets connectors read and write ([`FileAccess`]).
//!
//! The worker builds one from its `file.connector.allowed.dirs` setting and hands it to
//! validation (`validate_with_files`) and to every task context, so a connector that opens
//! local files (the FileStream connectors) checks each path against it without depending on
//! the worker. Paths are canonicalised before the check: `..` and symbolic links cannot
//! lead out of an allowed directory.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// The worker config key (ours) listing the directories, comma-separated.
pub const ALLOWED_DIRS_CONFIG: &str = "file.connector.allowed.dirs";

/// The directories connectors may read and write; none when the worker did not set
/// [`ALLOWED_DIRS_CONFIG`] (the default: every path is refused).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileAccess {
    /// Canonical directories; `None`: not configured.
    dirs: Option<Arc<[PathBuf]>>,
}

impl FileAccess {
    /// Nothing is allowed (the worker key is unset).
    pub fn disabled() -> Self {
        Self::default()
    }

    /// The worker's setting: comma-separated directories, each existing (relative ones from
    /// the worker's working directory). Blank means unset. The error is the reason, for a
    /// message naming the key.
    pub fn from_setting(value: &str) -> Result<Self, String> {
        let entries: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if entries.is_empty() {
            return Ok(Self::disabled());
        }
        let dirs = entries
            .into_iter()
            .map(|d| match std::fs::canonicalize(d) {
                Ok(p) if p.is_dir() => Ok(p),
                Ok(_) => Err(format!("'{d}' is not a directory")),
                Err(e) => Err(format!("directory '{d}' cannot be used: {e}")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            dirs: Some(dirs.into()),
        })
    }

    /// Allows exactly `dirs` (each canonicalised; for tests and embedders).
    pub fn allowing(dirs: impl IntoIterator<Item = impl AsRef<Path>>) -> std::io::Result<Self> {
        let dirs = dirs
            .into_iter()
            .map(|d| std::fs::canonicalize(d.as_ref()))
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(Self {
            dirs: Some(dirs.into()),
        })
    }

    /// The canonical allowed directories; `None` when the worker key is unset.
    pub fn dirs(&self) -> Option<&[PathBuf]> {
        self.dirs.as_deref()
    }

    /// Whether the worker set [`ALLOWED_DIRS_CONFIG`].
    pub fn is_enabled(&self) -> bool {
        self.dirs.is_some()
    }

    /// The message when the worker key is unset, for the connector named `what`.
    pub fn disabled_message(what: &str) -> String {
        format!(
            "{what} is disabled on this worker: the worker config '{ALLOWED_DIRS_CONFIG}' must list the directories it may read and write"
        )
    }

    /// `path` canonicalised (relative to the working directory), if it lies inside an allowed
    /// directory; otherwise the reason, naming the worker key. A file that does not exist yet is
    /// resolved through its nearest existing ancestor (the rest of the path must be plain names);
    /// a dangling symbolic link is refused.
    pub fn check(&self, what: &str, path: &Path) -> Result<PathBuf, String> {
        let Some(dirs) = self.dirs.as_deref() else {
            return Err(Self::disabled_message(what));
        };
        let resolved = resolve(path)
            .map_err(|reason| format!("{what} cannot use '{}': {reason}", path.display()))?;
        if dirs.iter().any(|d| resolved.starts_with(d)) {
            return Ok(resolved);
        }
        let list: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        Err(format!(
            "{what} may not use '{}' (resolved to '{}'): it is outside the directories the worker config '{ALLOWED_DIRS_CONFIG}' allows ({})",
            path.display(),
            resolved.display(),
            list.join(", ")
        ))
    }
}

/// The canonical form of `path`, also when it (or some of its last components) does not exist.
fn resolve(path: &Path) -> Result<PathBuf, String> {
    match std::fs::canonicalize(path) {
        Ok(p) => return Ok(p),
        Err(e) if e.kind() != ErrorKind::NotFound => return Err(e.to_string()),
        Err(_) => {}
    }
    // Something is missing. A name that exists but does not resolve is a dangling link: where
    // it would lead is decided later, by whoever creates its target.
    if std::fs::symlink_metadata(path).is_ok() {
        return Err("it is a symbolic link whose target does not exist".into());
    }
    let name = match path.components().next_back() {
        Some(Component::Normal(name)) => name.to_owned(),
        _ => return Err("the path does not name a file".into()),
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    Ok(resolve(&parent)?.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let d = std::env::temp_dir().join(format!("file-access-{name}-{nanos}"));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn unset_refuses_everything_and_names_the_key() {
        for access in [
            FileAccess::disabled(),
            FileAccess::from_setting(" , ").unwrap(),
        ] {
            let err = access
                .check("FileStreamSink", Path::new("/tmp/x"))
                .unwrap_err();
            assert!(err.contains(ALLOWED_DIRS_CONFIG), "{err}");
            assert!(!access.is_enabled());
        }
    }

    #[test]
    fn missing_directory_in_the_setting_is_an_error() {
        let err = FileAccess::from_setting("/no/such/dir-xyz").unwrap_err();
        assert!(err.contains("/no/such/dir-xyz"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn inside_allowed_outside_dotdot_and_symlinks_refused() {
        let root = temp_dir("root");
        let allowed = root.join("allowed");
        let outside = root.join("outside");
        std::fs::create_dir_all(&allowed).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret"), "s").unwrap();
        let access =
            FileAccess::from_setting(&format!("{},/nonexistent-ok-not", allowed.display()))
                .unwrap_err();
        assert!(access.contains("nonexistent-ok-not"));
        let access = FileAccess::from_setting(&allowed.display().to_string()).unwrap();
        let canon = std::fs::canonicalize(&allowed).unwrap();

        // Inside: existing, not yet existing, in a directory not yet created.
        std::fs::write(allowed.join("in.txt"), "x").unwrap();
        assert_eq!(
            access.check("F", &allowed.join("in.txt")).unwrap(),
            canon.join("in.txt")
        );
        assert_eq!(
            access.check("F", &allowed.join("new.txt")).unwrap(),
            canon.join("new.txt")
        );
        assert!(access.check("F", &allowed.join("a/b/c.txt")).is_ok());

        // Outside, `..` escapes (existing or not), a name prefix of the allowed dir.
        for bad in [
            outside.join("secret"),
            allowed.join("../outside/secret"),
            allowed.join("../outside/new.txt"),
            allowed.join("nope/../../outside/x"),
            root.join("allowed-sibling.txt"),
            PathBuf::from("/etc/passwd"),
        ] {
            let err = access.check("F", &bad).unwrap_err();
            assert!(err.starts_with("F "), "{bad:?}: {err}");
        }
        let err = access.check("F", &outside.join("secret")).unwrap_err();
        assert!(err.contains(ALLOWED_DIRS_CONFIG), "{err}");
        assert!(access.check("F", &allowed.join("x/..")).is_err());

        // Symbolic links out: to a file, to a directory, dangling.
        std::os::unix::fs::symlink(outside.join("secret"), allowed.join("link")).unwrap();
        std::os::unix::fs::symlink(&outside, allowed.join("dirlink")).unwrap();
        std::os::unix::fs::symlink(outside.join("later"), allowed.join("dangling")).unwrap();
        for bad in ["link", "dirlink/secret", "dirlink/new.txt", "dangling"] {
            assert!(access.check("F", &allowed.join(bad)).is_err(), "{bad}");
        }
        // A link that stays inside is fine.
        std::os::unix::fs::symlink(allowed.join("in.txt"), allowed.join("inlink")).unwrap();
        assert_eq!(
            access.check("F", &allowed.join("inlink")).unwrap(),
            canon.join("in.txt")
        );
        std::fs::remove_dir_all(root).ok();
    }
}
