//! KIP-507 session keys: the leader generates and rotates the key that signs internal REST
//! requests (`POST /connectors/{c}/tasks`, `PUT /connectors/{c}/fence`); every worker reads it
//! from the config topic's `session-key` record and verifies signatures with it.
//!
//! # Signing
//!
//! `X-Connect-Authorization` carries the standard Base64 of `HMAC(key, exact body bytes)` (empty
//! input when there is no body); `X-Connect-Request-Signature-Algorithm` names the MAC
//! (`HmacSHA256` by default). Verification compares in constant time.
//!
//! # Rotation
//!
//! The leader writes a new key when there is none, when `creation-timestamp +
//! inter.worker.key.ttl.ms` has passed, or when the key's algorithm or length no longer matches
//! its own `inter.worker.key.generation.algorithm` / `inter.worker.key.size`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::{Sha256, Sha384, Sha512};

use crate::config::{
    INTER_WORKER_KEY_GENERATION_ALGORITHM, INTER_WORKER_KEY_SIZE, INTER_WORKER_SIGNATURE_ALGORITHM,
    INTER_WORKER_VERIFICATION_ALGORITHMS, WorkerConfig,
};
use crate::storage::{ConfigBackingStore, SessionKey, StorageError};

/// Connect's default for every `inter.worker.*algorithm*` key.
pub const DEFAULT_ALGORITHM: &str = "HmacSHA256";
pub use crate::peer::{ALGORITHM_HEADER, SIGNATURE_HEADER};

/// The MAC algorithms this worker implements (Java names).
pub const SUPPORTED_ALGORITHMS: &[&str] = &["HmacSHA256", "HmacSHA384", "HmacSHA512"];

/// The `inter.worker.*` settings, read from the raw worker properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySettings {
    pub generation_algorithm: String,
    /// Key length in bytes.
    pub key_bytes: usize,
    pub ttl_ms: i64,
    pub signature_algorithm: String,
    pub verification_algorithms: Vec<String>,
}

/// The algorithm's default key size in bytes (Java's `KeyGenerator` defaults: the MAC's block
/// output size for SHA-2 HMACs).
fn default_key_bytes(algorithm: &str) -> usize {
    match algorithm {
        "HmacSHA384" => 48,
        "HmacSHA512" => 64,
        _ => 32,
    }
}

impl KeySettings {
    pub fn from_config(config: &WorkerConfig) -> Self {
        let raw = |k: &str| {
            config
                .raw
                .get(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let generation_algorithm =
            raw(INTER_WORKER_KEY_GENERATION_ALGORITHM).unwrap_or_else(|| DEFAULT_ALGORITHM.into());
        let key_bytes = raw(INTER_WORKER_KEY_SIZE)
            .and_then(|v| v.parse::<usize>().ok())
            .map(|bits| bits.div_ceil(8))
            .filter(|b| *b > 0)
            .unwrap_or_else(|| default_key_bytes(&generation_algorithm));
        let signature_algorithm =
            raw(INTER_WORKER_SIGNATURE_ALGORITHM).unwrap_or_else(|| DEFAULT_ALGORITHM.into());
        let verification_algorithms = raw(INTER_WORKER_VERIFICATION_ALGORITHMS)
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_else(|| vec![DEFAULT_ALGORITHM.to_owned()]);
        KeySettings {
            generation_algorithm,
            key_bytes,
            ttl_ms: i64::try_from(config.inter_worker_key_ttl.as_millis()).unwrap_or(i64::MAX),
            signature_algorithm,
            verification_algorithms,
        }
    }
}

/// Whether the leader must write a new key.
pub fn needs_rotation(current: Option<&SessionKey>, settings: &KeySettings, now_ms: i64) -> bool {
    match current {
        None => true,
        Some(k) => {
            k.algorithm != settings.generation_algorithm
                || k.key.len() != settings.key_bytes
                || k.creation_timestamp.saturating_add(settings.ttl_ms) <= now_ms
        }
    }
}

/// A fresh random key.
pub fn generate(settings: &KeySettings, now_ms: i64) -> SessionKey {
    let mut key = vec![0u8; settings.key_bytes];
    rand::rng().fill_bytes(&mut key);
    SessionKey {
        key,
        algorithm: settings.generation_algorithm.clone(),
        creation_timestamp: now_ms,
    }
}

/// Leader only: writes a new `session-key` record when the current one is missing, expired or
/// no longer matches this worker's settings. Returns whether a key was written. Call it when
/// this worker becomes leader and then periodically (at least every `inter.worker.key.ttl.ms`).
pub async fn maybe_rotate_session_key(
    store: &ConfigBackingStore,
    config: &WorkerConfig,
    now_ms: i64,
) -> Result<bool, StorageError> {
    let settings = KeySettings::from_config(config);
    if !SUPPORTED_ALGORITHMS.contains(&settings.generation_algorithm.as_str()) {
        return Err(StorageError::Data(format!(
            "unsupported {INTER_WORKER_KEY_GENERATION_ALGORITHM} {}; supported: {}",
            settings.generation_algorithm,
            SUPPORTED_ALGORITHMS.join(", ")
        )));
    }
    let snapshot = store.snapshot();
    if !needs_rotation(snapshot.session_key.as_ref(), &settings, now_ms) {
        return Ok(false);
    }
    let key = generate(&settings, now_ms);
    tracing::info!(algorithm = %key.algorithm, "writing a new session key for internal requests");
    store.put_session_key(&key).await?;
    Ok(true)
}

/// The raw bytes of a key as the `session-key` record stores it (standard Base64).
pub fn decode_key(key_b64: &str) -> Option<Vec<u8>> {
    BASE64.decode(key_b64.trim()).ok()
}

/// Why a signature could not be checked (not the same as "invalid").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("unsupported request signature algorithm {0}")]
    UnknownAlgorithm(String),
    #[error("the request signature is not valid Base64: {0}")]
    BadBase64(String),
}

fn mac_bytes(algorithm: &str, key: &[u8], body: &[u8]) -> Result<Vec<u8>, SignatureError> {
    macro_rules! mac {
        ($d:ty) => {{
            let mut m = <Hmac<$d> as Mac>::new_from_slice(key).expect("HMAC takes any key length");
            m.update(body);
            m.finalize().into_bytes().to_vec()
        }};
    }
    Ok(match algorithm {
        "HmacSHA256" => mac!(Sha256),
        "HmacSHA384" => mac!(Sha384),
        "HmacSHA512" => mac!(Sha512),
        other => return Err(SignatureError::UnknownAlgorithm(other.to_owned())),
    })
}

/// `X-Connect-Authorization` for `body`.
pub fn sign(algorithm: &str, key: &[u8], body: &[u8]) -> Result<String, SignatureError> {
    Ok(BASE64.encode(mac_bytes(algorithm, key, body)?))
}

/// Checks a Base64 signature in constant time. `Ok(false)` = a well-formed, wrong signature.
pub fn verify(
    algorithm: &str,
    key: &[u8],
    body: &[u8],
    signature_b64: &str,
) -> Result<bool, SignatureError> {
    let given = BASE64
        .decode(signature_b64.trim())
        .map_err(|e| SignatureError::BadBase64(e.to_string()))?;
    macro_rules! check {
        ($d:ty) => {{
            let mut m = <Hmac<$d> as Mac>::new_from_slice(key).expect("HMAC takes any key length");
            m.update(body);
            m.verify_slice(&given).is_ok()
        }};
    }
    Ok(match algorithm {
        "HmacSHA256" => check!(Sha256),
        "HmacSHA384" => check!(Sha384),
        "HmacSHA512" => check!(Sha512),
        other => return Err(SignatureError::UnknownAlgorithm(other.to_owned())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> KeySettings {
        KeySettings {
            generation_algorithm: DEFAULT_ALGORITHM.into(),
            key_bytes: 32,
            ttl_ms: 1000,
            signature_algorithm: DEFAULT_ALGORITHM.into(),
            verification_algorithms: vec![DEFAULT_ALGORITHM.into()],
        }
    }

    #[test]
    fn rotation_when_missing_expired_or_mismatched() {
        let s = settings();
        assert!(needs_rotation(None, &s, 0));
        let k = generate(&s, 100);
        assert_eq!(k.key.len(), 32);
        assert!(!needs_rotation(Some(&k), &s, 1099));
        assert!(needs_rotation(Some(&k), &s, 1100));
        let other = KeySettings {
            generation_algorithm: "HmacSHA512".into(),
            key_bytes: 64,
            ..s.clone()
        };
        assert!(needs_rotation(Some(&k), &other, 101));
        let shorter = KeySettings { key_bytes: 16, ..s };
        assert!(needs_rotation(Some(&k), &shorter, 101));
    }

    #[test]
    fn sign_and_verify_round_trip() {
        let key = b"0123456789abcdef0123456789abcdef";
        let body = br#"[{"task.class":"x"}]"#;
        let sig = sign("HmacSHA256", key, body).unwrap();
        assert!(verify("HmacSHA256", key, body, &sig).unwrap());
        assert!(!verify("HmacSHA256", key, b"[]", &sig).unwrap());
        assert!(!verify("HmacSHA256", b"other key", body, &sig).unwrap());
        assert!(matches!(
            verify("HmacSHA256", key, body, "not base64!"),
            Err(SignatureError::BadBase64(_))
        ));
        assert!(matches!(
            verify("HmacMD5", key, body, &sig),
            Err(SignatureError::UnknownAlgorithm(_))
        ));
    }

    #[test]
    fn known_hmac_sha256_vector() {
        // RFC 4231, test case 2.
        let sig = sign("HmacSHA256", b"Jefe", b"what do ya want for nothing?").unwrap();
        let hex: String = BASE64
            .decode(sig)
            .unwrap()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
