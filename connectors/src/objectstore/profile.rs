//! AWS shared credentials files, the step of the AWS default credentials chain (the one
//! Confluent's S3 sink uses when `aws.access.key.id` is empty) that `object_store` leaves out:
//! the profile `AWS_PROFILE` (else `default`) of `AWS_SHARED_CREDENTIALS_FILE` (else
//! `~/.aws/credentials`), then of `AWS_CONFIG_FILE` (else `~/.aws/config`, where the section is
//! `[profile <name>]` but for `default`). As in the AWS SDKs, the chain asks the environment's
//! keys and a web identity token first, the profile next, container and instance metadata
//! last.

use std::path::{Path, PathBuf};

/// A profile's static keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileCredentials {
    pub profile: String,
    pub file: PathBuf,
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

/// The keys of section `section` of an INI file (`key = value` lines, `#` and `;` comments).
fn section(text: &str, section: &str) -> Option<Vec<(String, String)>> {
    let mut found = None;
    let mut current: Option<&str> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(name.trim());
            if current == Some(section) {
                found.get_or_insert_with(Vec::new);
            }
            continue;
        }
        if current == Some(section)
            && let Some((k, v)) = line.split_once('=')
        {
            found
                .get_or_insert_with(Vec::new)
                .push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    found
}

/// The keys of `profile` in the credentials file text (`[name]`) or the config file text
/// (`[profile name]`, `[default]`), if it has both an access key id and a secret.
pub fn parse(
    text: &str,
    profile: &str,
    config_file: bool,
    file: &Path,
) -> Option<ProfileCredentials> {
    let name = if config_file && profile != "default" {
        format!("profile {profile}")
    } else {
        profile.to_owned()
    };
    let keys = section(text, &name)?;
    let get = |k: &str| {
        keys.iter()
            .rev()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    Some(ProfileCredentials {
        profile: profile.to_owned(),
        file: file.to_owned(),
        access_key_id: get("aws_access_key_id")?,
        secret_access_key: get("aws_secret_access_key")?,
        session_token: get("aws_session_token"),
    })
}

/// The profile's keys from the files the environment names, if any has them.
pub fn from_env() -> Option<ProfileCredentials> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let profile = var("AWS_PROFILE").unwrap_or_else(|| "default".to_owned());
    let home = var("HOME").map(PathBuf::from);
    let in_home = |f: &str| home.as_ref().map(|h| h.join(".aws").join(f));
    let files = [
        (
            var("AWS_SHARED_CREDENTIALS_FILE")
                .map(PathBuf::from)
                .or_else(|| in_home("credentials")),
            false,
        ),
        (
            var("AWS_CONFIG_FILE")
                .map(PathBuf::from)
                .or_else(|| in_home("config")),
            true,
        ),
    ];
    files.into_iter().find_map(|(file, config)| {
        let file = file?;
        let text = std::fs::read_to_string(&file).ok()?;
        parse(&text, &profile, config, &file)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_of_the_credentials_and_config_files() {
        let creds = "# comment\n[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key=s1\n\n\
                     [ci]\n aws_access_key_id = AKIDCI \n aws_secret_access_key = s2\n aws_session_token = t\n\
                     [half]\naws_access_key_id = x\n";
        let f = Path::new("creds");
        let d = parse(creds, "default", false, f).unwrap();
        assert_eq!(
            (
                d.access_key_id.as_str(),
                d.secret_access_key.as_str(),
                d.session_token
            ),
            ("AKIDDEFAULT", "s1", None)
        );
        let ci = parse(creds, "ci", false, f).unwrap();
        assert_eq!(
            (
                ci.access_key_id.as_str(),
                ci.secret_access_key.as_str(),
                ci.session_token.as_deref()
            ),
            ("AKIDCI", "s2", Some("t"))
        );
        assert_eq!(parse(creds, "half", false, f), None, "no secret");
        assert_eq!(parse(creds, "other", false, f), None);
        let config = "[default]\nregion = us-east-1\n[profile ci]\naws_access_key_id=A\naws_secret_access_key=B\n";
        assert_eq!(parse(config, "ci", true, f).unwrap().access_key_id, "A");
        assert_eq!(
            parse(config, "ci", false, f),
            None,
            "[profile ci] is the config file's form"
        );
        assert_eq!(
            parse(config, "default", true, f),
            None,
            "no keys in [default]"
        );
    }
}
