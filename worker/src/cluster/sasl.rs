//! The client side of the SASL mechanisms the group-membership client speaks, as pure state
//! machines over the bytes carried in `SaslAuthenticate` requests and responses:
//!
//! - `PLAIN` (RFC 4616): one message, `\0username\0password`;
//! - `SCRAM-SHA-256` and `SCRAM-SHA-512` (RFC 5802, RFC 7677): client-first, client-final with
//!   the proof, then the server's signature is verified (a broker that does not know the
//!   password cannot pass); at least 4096 iterations, as Kafka's Java client demands;
//! - `OAUTHBEARER` (RFC 7628): the client's initial response `n,,\x01auth=Bearer <token>\x01\x01`
//!   with a static token, or with an unsigned JWT made like Java's
//!   `OAuthBearerUnsecuredLoginCallbackHandler` for `unsecuredLoginStringClaim_sub`.
//!
//! Not supported: GSSAPI (Kerberos), SCRAM channel binding and extensions (delegation tokens),
//! OAUTHBEARER SASL extensions and the OIDC client-credentials flow.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use rand::Rng;
use sha2::{Digest, Sha256, Sha512};

use crate::security::{Sasl, SaslCredentials, SaslMechanism};

/// Kafka's `ScramMechanism.minIterations()`: fewer means a weak or forged server-first message.
pub const SCRAM_MIN_ITERATIONS: u32 = 4096;

/// The lifetime Java's unsecured login handler gives its tokens (`unsecuredLoginLifetimeSeconds`
/// default).
pub const UNSECURED_TOKEN_LIFETIME_SECS: u64 = 3600;

/// What to do after a server message.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Send these bytes in the next `SaslAuthenticate`.
    Send(Vec<u8>),
    /// Authentication is complete on the client's side.
    Done,
}

/// One authentication exchange (a fresh one for each authentication and re-authentication).
pub enum SaslSession {
    Plain {
        sent: bool,
    },
    Scram(ScramClient),
    OAuthBearer {
        /// The broker's JSON error challenge, once received: the exchange then only finishes
        /// with the broker's error.
        error: Option<String>,
    },
}

impl SaslSession {
    /// Starts an exchange; returns the session and the client's first message.
    pub fn start(sasl: &Sasl) -> Result<(SaslSession, Vec<u8>), String> {
        match (sasl.mechanism, &sasl.credentials) {
            (SaslMechanism::Plain, SaslCredentials::UsernamePassword { username, password }) => {
                Ok((
                    SaslSession::Plain { sent: true },
                    plain_message(username, password),
                ))
            }
            (
                m @ (SaslMechanism::ScramSha256 | SaslMechanism::ScramSha512),
                SaslCredentials::UsernamePassword { username, password },
            ) => {
                let hash = if m == SaslMechanism::ScramSha256 {
                    ScramHash::Sha256
                } else {
                    ScramHash::Sha512
                };
                let mut client = ScramClient::new(hash, username, password, &random_nonce());
                let first = client.client_first();
                Ok((SaslSession::Scram(client), first))
            }
            (SaslMechanism::OAuthBearer, SaslCredentials::UnsecuredToken { principal }) => Ok((
                SaslSession::OAuthBearer { error: None },
                oauthbearer_initial_response(&unsecured_jwt(principal, SystemTime::now())),
            )),
            (SaslMechanism::OAuthBearer, SaslCredentials::Token { token }) => Ok((
                SaslSession::OAuthBearer { error: None },
                oauthbearer_initial_response(token),
            )),
            (m, c) => Err(format!(
                "SASL mechanism {} cannot use {} credentials",
                m.name(),
                match c {
                    SaslCredentials::UsernamePassword { .. } => "username/password",
                    SaslCredentials::UnsecuredToken { .. } => "unsecured-token",
                    SaslCredentials::Token { .. } => "token",
                }
            )),
        }
    }

    /// Feeds the broker's `auth_bytes` from a successful `SaslAuthenticate` response.
    pub fn step(&mut self, server: &[u8]) -> Result<Step, String> {
        match self {
            SaslSession::Plain { sent } => {
                if !*sent || !server.is_empty() {
                    return Err("unexpected PLAIN server message".into());
                }
                Ok(Step::Done)
            }
            SaslSession::Scram(client) => client.step(server),
            SaslSession::OAuthBearer { error } => {
                if let Some(e) = error {
                    return Err(format!("the broker rejected the token: {e}"));
                }
                if server.is_empty() {
                    return Ok(Step::Done);
                }
                // RFC 7628 §3.2.2: an error challenge is answered with a single %x01; the
                // broker then fails the exchange.
                *error = Some(String::from_utf8_lossy(server).into_owned());
                Ok(Step::Send(vec![0x01]))
            }
        }
    }
}

/// RFC 4616 with an empty authorization id, as Java's `PlainSaslClient`.
pub fn plain_message(username: &str, password: &str) -> Vec<u8> {
    let mut m = Vec::with_capacity(username.len() + password.len() + 2);
    m.push(0);
    m.extend_from_slice(username.as_bytes());
    m.push(0);
    m.extend_from_slice(password.as_bytes());
    m
}

/// RFC 7628 §3.1 client initial response with no authorization id and no extensions, byte for
/// byte Java's `OAuthBearerClientInitialResponse.toBytes()`.
pub fn oauthbearer_initial_response(token: &str) -> Vec<u8> {
    format!("n,,\x01auth=Bearer {token}\x01\x01").into_bytes()
}

/// An unsigned JWT as Java's `OAuthBearerUnsecuredLoginCallbackHandler` makes it for
/// `unsecuredLoginStringClaim_sub=<principal>`: header `{"alg":"none"}`, claims `exp`, `iat`
/// (seconds since the epoch with milliseconds; `exp = iat + 3600`) and `sub`, each part
/// base64url without padding, and an empty signature: `header.claims.`. (Java writes the
/// numbers with `Double.toString`, e.g. `1.7330562E9`; the values are the same.)
pub fn unsecured_jwt(principal: &str, now: SystemTime) -> String {
    let ms = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let seconds = |ms: u64| format!("{}.{:03}", ms / 1000, ms % 1000);
    let header = r#"{"alg":"none"}"#;
    let claims = format!(
        r#"{{"exp":{},"iat":{},"sub":{}}}"#,
        seconds(ms + UNSECURED_TOKEN_LIFETIME_SECS * 1000),
        seconds(ms),
        serde_json::Value::String(principal.to_owned())
    );
    format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(header),
        URL_SAFE_NO_PAD.encode(claims)
    )
}

fn random_nonce() -> String {
    rand::rng()
        .sample_iter(&rand::distr::Alphanumeric)
        .take(32)
        .map(char::from)
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScramHash {
    Sha256,
    Sha512,
}

impl ScramHash {
    fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        match self {
            ScramHash::Sha256 => {
                let mut m = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
            ScramHash::Sha512 => {
                let mut m = Hmac::<Sha512>::new_from_slice(key).expect("HMAC takes any key length");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
        }
    }

    fn hash(self, data: &[u8]) -> Vec<u8> {
        match self {
            ScramHash::Sha256 => Sha256::digest(data).to_vec(),
            ScramHash::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    /// RFC 5802 `Hi()`: PBKDF2 with HMAC of this hash, one block.
    fn hi(self, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        match self {
            ScramHash::Sha256 => {
                let mut out = [0u8; 32];
                pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, iterations, &mut out);
                out.to_vec()
            }
            ScramHash::Sha512 => {
                let mut out = [0u8; 64];
                pbkdf2::pbkdf2_hmac::<Sha512>(password, salt, iterations, &mut out);
                out.to_vec()
            }
        }
    }
}

enum ScramState {
    ClientFirstSent,
    ClientFinalSent { server_signature: Vec<u8> },
    Done,
}

/// RFC 5802 client, without channel binding (`n,,`), as Java's `ScramSaslClient`.
pub struct ScramClient {
    hash: ScramHash,
    username: String,
    password: String,
    nonce: String,
    state: ScramState,
}

/// RFC 5802 `saslname`: `=` and `,` escaped.
fn sasl_name(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

impl ScramClient {
    pub fn new(hash: ScramHash, username: &str, password: &str, nonce: &str) -> Self {
        ScramClient {
            hash,
            username: username.to_owned(),
            password: password.to_owned(),
            nonce: nonce.to_owned(),
            state: ScramState::ClientFirstSent,
        }
    }

    fn client_first_bare(&self) -> String {
        format!("n={},r={}", sasl_name(&self.username), self.nonce)
    }

    pub fn client_first(&mut self) -> Vec<u8> {
        self.state = ScramState::ClientFirstSent;
        format!("n,,{}", self.client_first_bare()).into_bytes()
    }

    pub fn step(&mut self, server: &[u8]) -> Result<Step, String> {
        let msg = std::str::from_utf8(server)
            .map_err(|_| "the SCRAM server message is not UTF-8".to_owned())?;
        match std::mem::replace(&mut self.state, ScramState::Done) {
            ScramState::ClientFirstSent => {
                let (final_msg, server_signature) = self.client_final(msg)?;
                self.state = ScramState::ClientFinalSent { server_signature };
                Ok(Step::Send(final_msg.into_bytes()))
            }
            ScramState::ClientFinalSent { server_signature } => {
                let attrs = attributes(msg);
                if let Some(e) = attr(&attrs, "e") {
                    return Err(format!("the SCRAM server reported an error: {e}"));
                }
                let v = attr(&attrs, "v")
                    .ok_or_else(|| format!("SCRAM server-final message without v=: {msg}"))?;
                let v = STANDARD
                    .decode(v)
                    .map_err(|e| format!("SCRAM server signature is not base64: {e}"))?;
                if v != server_signature {
                    return Err(
                        "the SCRAM server signature does not match: the broker does not know \
                         this user's password (or is not the broker it claims to be)"
                            .into(),
                    );
                }
                Ok(Step::Done)
            }
            ScramState::Done => Err("SCRAM exchange already finished".into()),
        }
    }

    /// Answers the server-first message; returns the client-final message and the server
    /// signature to expect.
    fn client_final(&self, server_first: &str) -> Result<(String, Vec<u8>), String> {
        let attrs = attributes(server_first);
        if let Some(e) = attr(&attrs, "e") {
            return Err(format!("the SCRAM server reported an error: {e}"));
        }
        let bad =
            |what: &str| format!("invalid SCRAM server-first message ({what}): {server_first}");
        let nonce = attr(&attrs, "r").ok_or_else(|| bad("no nonce"))?;
        if !nonce.starts_with(&self.nonce) || nonce.len() <= self.nonce.len() {
            return Err(bad("the nonce does not extend the client's"));
        }
        let salt = STANDARD
            .decode(attr(&attrs, "s").ok_or_else(|| bad("no salt"))?)
            .map_err(|_| bad("salt is not base64"))?;
        let iterations: u32 = attr(&attrs, "i")
            .ok_or_else(|| bad("no iteration count"))?
            .parse()
            .map_err(|_| bad("iteration count is not a number"))?;
        if iterations < SCRAM_MIN_ITERATIONS {
            return Err(format!(
                "the SCRAM server asked for {iterations} iterations, fewer than the minimum \
                 {SCRAM_MIN_ITERATIONS}"
            ));
        }
        let h = self.hash;
        let salted = h.hi(self.password.as_bytes(), &salt, iterations);
        let client_key = h.hmac(&salted, b"Client Key");
        let stored_key = h.hash(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!(
            "{},{},{}",
            self.client_first_bare(),
            server_first,
            without_proof
        );
        let client_signature = h.hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&client_signature)
            .map(|(a, b)| a ^ b)
            .collect();
        let server_key = h.hmac(&salted, b"Server Key");
        let server_signature = h.hmac(&server_key, auth_message.as_bytes());
        Ok((
            format!("{without_proof},p={}", STANDARD.encode(proof)),
            server_signature,
        ))
    }
}

fn attributes(msg: &str) -> Vec<(&str, &str)> {
    msg.split(',').filter_map(|kv| kv.split_once('=')).collect()
}

fn attr<'a>(attrs: &[(&'a str, &'a str)], key: &str) -> Option<&'a str> {
    attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn plain_message_is_rfc_4616_without_authzid() {
        assert_eq!(
            plain_message("alice", "s3cret"),
            b"\0alice\0s3cret".to_vec()
        );
        let sasl = Sasl {
            mechanism: SaslMechanism::Plain,
            credentials: SaslCredentials::UsernamePassword {
                username: "u".into(),
                password: "p".into(),
            },
        };
        let (mut s, first) = SaslSession::start(&sasl).unwrap();
        assert_eq!(first, b"\0u\0p".to_vec());
        assert_eq!(s.step(b"").unwrap(), Step::Done);
    }

    /// RFC 7677 §3, the SCRAM-SHA-256 example exchange.
    #[test]
    fn scram_sha_256_matches_rfc_7677_example() {
        let mut c = ScramClient::new(ScramHash::Sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(
            c.client_first(),
            b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO".to_vec()
        );
        let server_first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let Step::Send(client_final) = c.step(server_first.as_bytes()).unwrap() else {
            panic!("expected a client-final message");
        };
        assert_eq!(
            String::from_utf8(client_final).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
             p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        assert_eq!(
            c.step(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
                .unwrap(),
            Step::Done
        );
    }

    #[test]
    fn scram_rejects_a_wrong_server_signature_and_server_errors() {
        let mut c = ScramClient::new(ScramHash::Sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        c.client_first();
        c.step(
            b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        )
        .unwrap();
        let e = c
            .step(b"v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
            .unwrap_err();
        assert!(e.contains("signature does not match"), "{e}");

        let mut c = ScramClient::new(ScramHash::Sha256, "user", "pencil", "abc");
        c.client_first();
        let e = c.step(b"e=unknown-user").unwrap_err();
        assert!(e.contains("unknown-user"), "{e}");

        // A nonce that does not extend ours, and too few iterations.
        let mut c = ScramClient::new(ScramHash::Sha256, "user", "pencil", "abc");
        c.client_first();
        let e = c.step(b"r=xyz123,s=AAAA,i=4096").unwrap_err();
        assert!(e.contains("nonce"), "{e}");
        let mut c = ScramClient::new(ScramHash::Sha256, "user", "pencil", "abc");
        c.client_first();
        let e = c.step(b"r=abc123,s=AAAA,i=100").unwrap_err();
        assert!(e.contains("iterations"), "{e}");
    }

    /// A server that stores only StoredKey/ServerKey (as Kafka does) verifies the SHA-512 proof,
    /// and the client verifies its signature; a wrong password fails the server's check.
    #[test]
    fn scram_sha_512_round_trip_against_a_server() {
        fn server(client_first: &[u8], client: &mut ScramClient) -> bool {
            let h = ScramHash::Sha512;
            let salt = b"kafka-salt-0123";
            let iterations = 4096;
            // Kafka's credential: derived once from the real password "right".
            let salted = h.hi(b"right", salt, iterations);
            let stored_key = h.hash(&h.hmac(&salted, b"Client Key"));
            let server_key = h.hmac(&salted, b"Server Key");
            let first = std::str::from_utf8(client_first).unwrap();
            let bare = first.strip_prefix("n,,").unwrap();
            let cnonce = attr(&attributes(bare), "r").unwrap().to_owned();
            let server_first = format!(
                "r={cnonce}srvnonce,s={},i={iterations}",
                STANDARD.encode(salt)
            );
            let Step::Send(fin) = client.step(server_first.as_bytes()).unwrap() else {
                panic!()
            };
            let fin = String::from_utf8(fin).unwrap();
            let (without_proof, proof) = fin.rsplit_once(",p=").unwrap();
            let auth_message = format!("{bare},{server_first},{without_proof}");
            let sig = h.hmac(&stored_key, auth_message.as_bytes());
            let client_key: Vec<u8> = STANDARD
                .decode(proof)
                .unwrap()
                .iter()
                .zip(&sig)
                .map(|(a, b)| a ^ b)
                .collect();
            if h.hash(&client_key) != stored_key {
                return false;
            }
            let v = STANDARD.encode(h.hmac(&server_key, auth_message.as_bytes()));
            client.step(format!("v={v}").as_bytes()).unwrap() == Step::Done
        }
        let sasl = |password: &str| Sasl {
            mechanism: SaslMechanism::ScramSha512,
            credentials: SaslCredentials::UsernamePassword {
                username: "con,nect=".into(),
                password: password.into(),
            },
        };
        for (password, ok) in [("right", true), ("wrong", false)] {
            let (session, first) = SaslSession::start(&sasl(password)).unwrap();
            let SaslSession::Scram(mut client) = session else {
                panic!("SCRAM session expected")
            };
            assert!(
                String::from_utf8_lossy(&first).starts_with("n,,n=con=2Cnect=3D,r="),
                "{}",
                String::from_utf8_lossy(&first)
            );
            assert_eq!(server(&first, &mut client), ok, "password {password}");
        }
    }

    #[test]
    fn oauthbearer_message_and_unsecured_token_have_javas_shape() {
        assert_eq!(
            oauthbearer_initial_response("abc.def."),
            b"n,,\x01auth=Bearer abc.def.\x01\x01".to_vec()
        );
        let now = UNIX_EPOCH + Duration::from_millis(1_733_056_200_123);
        let jwt = unsecured_jwt("connect \"x\"", now);
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3, "{jwt}");
        assert_eq!(parts[2], "", "unsigned: empty signature");
        assert!(!jwt.contains('='), "no padding: {jwt}");
        let header = URL_SAFE_NO_PAD.decode(parts[0]).unwrap();
        assert_eq!(header, br#"{"alg":"none"}"#.to_vec());
        let claims = String::from_utf8(URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(
            claims,
            r#"{"exp":1733059800.123,"iat":1733056200.123,"sub":"connect \"x\""}"#
        );
        let v: serde_json::Value = serde_json::from_str(&claims).unwrap();
        assert_eq!(
            v["exp"].as_f64().unwrap() - v["iat"].as_f64().unwrap(),
            3600.0
        );

        let sasl = Sasl {
            mechanism: SaslMechanism::OAuthBearer,
            credentials: SaslCredentials::UnsecuredToken {
                principal: "connect".into(),
            },
        };
        let (mut s, first) = SaslSession::start(&sasl).unwrap();
        let first = String::from_utf8(first).unwrap();
        assert!(
            first.starts_with("n,,\x01auth=Bearer eyJhbGciOiJub25lIn0."),
            "{first}"
        );
        assert!(first.ends_with(".\x01\x01"), "{first}");
        assert_eq!(s.step(b"").unwrap(), Step::Done);

        // An error challenge is answered with %x01, then the exchange fails with it.
        let (mut s, _) = SaslSession::start(&sasl).unwrap();
        assert_eq!(
            s.step(br#"{"status":"invalid_token"}"#).unwrap(),
            Step::Send(vec![1])
        );
        assert!(s.step(b"").unwrap_err().contains("invalid_token"));
    }

    #[test]
    fn a_mechanism_with_the_wrong_credentials_is_refused() {
        let sasl = Sasl {
            mechanism: SaslMechanism::Plain,
            credentials: SaslCredentials::Token { token: "t".into() },
        };
        let e = SaslSession::start(&sasl).err().unwrap();
        assert!(e.contains("PLAIN") && e.contains("token"), "{e}");
    }
}
