//! Confluent's `s3.object.tagging`: once an object is stored, its first and last Kafka offsets
//! and its record count (with `s3.object.tagging.key.value.pairs` besides) become its S3 tags
//! (`startOffset`, `endOffset`, `recordCount`), set with `PutObjectTagging` as Confluent's
//! `TopicPartitionWriter.tagFile` sets them. `s3.object.behavior.on.tagging.error` says what a
//! failed tagging does: `ignore` logs it, `fail` fails the task (the object stays, untagged; the
//! next owner of the partition writes and tags it again).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine as _;
use connect_api::error::{ConnectError, Result};
use object_store::aws::{AwsAuthorizer, AwsCredentialProvider};
use object_store::client::{HttpClient, HttpRequest, HttpRequestBody};
use object_store::path::Path;
use sha2::{Digest, Sha256};

/// What a stored file held: the tags Confluent's sink gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileTags {
    /// The offset of the file's first record.
    pub start: i64,
    /// The offset of its last record.
    pub end: i64,
    /// How many records it holds.
    pub records: u64,
}

/// Sets an object's tags (replacing any it had).
#[async_trait]
pub trait Tagger: Send + Sync + fmt::Debug {
    async fn put_tags(
        &self,
        object: &Path,
        tags: &[(String, String)],
    ) -> std::result::Result<(), String>;
}

/// `s3.object.tagging=true` with its other keys.
#[derive(Clone, Debug)]
pub struct Tagging {
    /// `s3.object.tagging.key.value.pairs`, after the offsets and count (a pair with one of
    /// their keys replaces it, as Confluent's map does).
    pub extra: Vec<(String, String)>,
    /// `s3.object.behavior.on.tagging.error=fail`.
    pub fail: bool,
    pub tagger: Arc<dyn Tagger>,
}

impl Tagging {
    /// The tags of a file: `startOffset`, `endOffset`, `recordCount`, then the extra pairs.
    pub fn tags(&self, f: &FileTags) -> Vec<(String, String)> {
        let mut tags = vec![
            ("startOffset".to_owned(), f.start.to_string()),
            ("endOffset".to_owned(), f.end.to_string()),
            ("recordCount".to_owned(), f.records.to_string()),
        ];
        for (k, v) in &self.extra {
            match tags.iter_mut().find(|(key, _)| key == k) {
                Some(t) => t.1 = v.clone(),
                None => tags.push((k.clone(), v.clone())),
            }
        }
        tags
    }

    /// Tags a stored object; a failure is logged (`ignore`) or fails the task (`fail`).
    pub async fn tag(&self, object: &Path, f: &FileTags) -> Result<()> {
        match self.tagger.put_tags(object, &self.tags(f)).await {
            Ok(()) => {
                tracing::debug!(object = %object, start = f.start, end = f.end, records = f.records, "tagged");
                Ok(())
            }
            Err(e) if !self.fail => {
                tracing::warn!(object = %object, error = %e, "Unable to tag S3 object. Ignoring.");
                Ok(())
            }
            Err(e) => Err(ConnectError::fatal(format!(
                "Unable to tag S3 object {object}: {e}"
            ))),
        }
    }
}

/// Parses `s3.object.tagging.key.value.pairs` (`key:value` items); `Err` names the bad item.
pub fn parse_pairs(items: &[String]) -> std::result::Result<Vec<(String, String)>, String> {
    items
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| match s.split_once(':') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.trim().to_owned())),
            _ => Err(format!("{s:?} is not a key:value pair")),
        })
        .collect()
}

/// `PutObjectTagging` against the bucket the sink writes to, signed with the store's own
/// credentials, retried as the store retries (`s3.part.retries`, `s3.retry.backoff.ms`).
pub struct S3Tagger {
    pub client: HttpClient,
    pub credentials: AwsCredentialProvider,
    /// The bucket's URL (`<endpoint>/<bucket>` with path-style access).
    pub bucket_endpoint: String,
    pub region: String,
    pub retries: usize,
    pub backoff: Duration,
}

impl fmt::Debug for S3Tagger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Tagger")
            .field("bucket_endpoint", &self.bucket_endpoint)
            .finish_non_exhaustive()
    }
}

/// S3's URI encoding of a key's segments: everything but `A-Za-z0-9-._~` as `%XX`.
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The `PutObjectTagging` body.
fn tagging_xml(tags: &[(String, String)]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <Tagging xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><TagSet>",
    );
    for (k, v) in tags {
        xml.push_str(&format!(
            "<Tag><Key>{}</Key><Value>{}</Value></Tag>",
            xml_escape(k),
            xml_escape(v)
        ));
    }
    xml.push_str("</TagSet></Tagging>");
    xml
}

impl S3Tagger {
    async fn attempt(
        &self,
        url: &str,
        body: &str,
        digest: &[u8],
    ) -> std::result::Result<(), (bool, String)> {
        let credential = self
            .credentials
            .get_credential()
            .await
            .map_err(|e| (true, format!("no credentials: {e}")))?;
        let checksum = base64::engine::general_purpose::STANDARD.encode(digest);
        let mut req: HttpRequest = http::Request::builder()
            .method("PUT")
            .uri(url)
            .header("content-type", "application/xml")
            .header("x-amz-checksum-sha256", checksum)
            .body(HttpRequestBody::from(body.to_owned()))
            .map_err(|e| (false, format!("bad request: {e}")))?;
        AwsAuthorizer::new(&credential, "s3", &self.region)
            .try_authorize(&mut req, Some(digest))
            .map_err(|e| (false, format!("signing: {e}")))?;
        let res = self
            .client
            .execute(req)
            .await
            .map_err(|e| (true, e.to_string()))?;
        let status = res.status();
        if status.is_success() {
            return Ok(());
        }
        let text = match res.into_body().bytes().await {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => e.to_string(),
        };
        Err((
            status.is_server_error() || status.as_u16() == 429,
            format!("{status}: {text}"),
        ))
    }
}

#[async_trait]
impl Tagger for S3Tagger {
    async fn put_tags(
        &self,
        object: &Path,
        tags: &[(String, String)],
    ) -> std::result::Result<(), String> {
        let key: Vec<String> = object.parts().map(|p| encode_segment(p.as_ref())).collect();
        let url = format!(
            "{}/{}?tagging",
            self.bucket_endpoint.trim_end_matches('/'),
            key.join("/")
        );
        let body = tagging_xml(tags);
        let digest = Sha256::digest(body.as_bytes());
        let mut backoff = self.backoff;
        let mut attempt = 0;
        loop {
            match self.attempt(&url, &body, &digest).await {
                Ok(()) => return Ok(()),
                Err((retriable, e)) if retriable && attempt < self.retries => {
                    tracing::debug!(object = %object, error = %e, "tagging failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(20));
                    attempt += 1;
                }
                Err((_, e)) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Nothing;

    #[async_trait]
    impl Tagger for Nothing {
        async fn put_tags(
            &self,
            _: &Path,
            _: &[(String, String)],
        ) -> std::result::Result<(), String> {
            Err("refused".to_owned())
        }
    }

    #[test]
    fn tags_are_confluents_then_the_extra_pairs() {
        let t = Tagging {
            extra: parse_pairs(&["team:data".to_owned(), " recordCount : x ".to_owned()]).unwrap(),
            fail: false,
            tagger: Arc::new(Nothing),
        };
        let tags = t.tags(&FileTags {
            start: 100,
            end: 149,
            records: 50,
        });
        let want: Vec<(String, String)> = [
            ("startOffset", "100"),
            ("endOffset", "149"),
            ("recordCount", "x"),
            ("team", "data"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        assert_eq!(tags, want);
        assert!(parse_pairs(&["novalue".to_owned()]).is_err());
        assert_eq!(parse_pairs(&[]).unwrap(), vec![]);
    }

    #[test]
    fn keys_are_encoded_as_s3_signs_them() {
        assert_eq!(
            encode_segment("t+0+0000000050.avro"),
            "t%2B0%2B0000000050.avro"
        );
        assert_eq!(encode_segment("day=01"), "day%3D01");
        assert!(
            tagging_xml(&[("a&b".to_owned(), "<v>".to_owned())])
                .contains("<Tag><Key>a&amp;b</Key><Value>&lt;v&gt;</Value></Tag>")
        );
    }

    #[tokio::test]
    async fn a_refused_tagging_is_ignored_or_fails_the_task() {
        let f = FileTags {
            start: 0,
            end: 0,
            records: 1,
        };
        let mut t = Tagging {
            extra: vec![],
            fail: false,
            tagger: Arc::new(Nothing),
        };
        t.tag(&Path::from("a/b"), &f).await.unwrap();
        t.fail = true;
        let e = t.tag(&Path::from("a/b"), &f).await.unwrap_err();
        assert!(
            !e.is_retriable() && e.to_string().contains("Unable to tag S3 object a/b"),
            "{e}"
        );
    }
}
