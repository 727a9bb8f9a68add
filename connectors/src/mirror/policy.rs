//! Remote topic naming: Apache's `DefaultReplicationPolicy` and `IdentityReplicationPolicy`
//! (connect-mirror-client), with their defaults and quirks.

/// Apache's class names (users configure these in `replication.policy.class`).
pub const DEFAULT_POLICY_CLASS: &str = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy";
pub const IDENTITY_POLICY_CLASS: &str = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy";

/// The heartbeats topic (`ReplicationPolicy.heartbeatsTopic`).
pub const HEARTBEATS_TOPIC: &str = "heartbeats";

/// A replication policy, configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicationPolicy {
    /// `replication.policy.separator` (default `.`).
    pub separator: String,
    /// `replication.policy.internal.topic.separator.enabled` (default true): internal topics
    /// use the separator too; false uses `.`.
    pub internal_separator_enabled: bool,
    /// `Some(source alias)` for `IdentityReplicationPolicy` (remote topics keep their names).
    pub identity_source: Option<String>,
}

impl ReplicationPolicy {
    pub fn default_policy(separator: &str, internal_separator_enabled: bool) -> Self {
        Self {
            separator: separator.to_owned(),
            internal_separator_enabled,
            identity_source: None,
        }
    }

    pub fn identity(separator: &str, internal_separator_enabled: bool, source: &str) -> Self {
        Self {
            identity_source: Some(source.to_owned()),
            ..Self::default_policy(separator, internal_separator_enabled)
        }
    }

    /// The policy a class name names; `None` for a class this worker does not have.
    pub fn for_class(
        class: &str,
        separator: &str,
        internal_separator_enabled: bool,
        source: &str,
    ) -> Option<Self> {
        match class.trim() {
            DEFAULT_POLICY_CLASS | "DefaultReplicationPolicy" => {
                Some(Self::default_policy(separator, internal_separator_enabled))
            }
            IDENTITY_POLICY_CLASS | "IdentityReplicationPolicy" => Some(Self::identity(
                separator,
                internal_separator_enabled,
                source,
            )),
            _ => None,
        }
    }

    fn looks_like_heartbeat(topic: &str) -> bool {
        topic.ends_with(HEARTBEATS_TOPIC)
    }

    pub fn format_remote_topic(&self, source_alias: &str, topic: &str) -> String {
        if self.identity_source.is_some() && !Self::looks_like_heartbeat(topic) {
            return topic.to_owned();
        }
        format!("{source_alias}{}{topic}", self.separator)
    }

    /// Java `String.split` on the separator: trailing empty parts dropped; fewer than two
    /// parts means "not a remote topic".
    fn default_topic_source(&self, topic: &str) -> Option<String> {
        if self.separator.is_empty() {
            return None;
        }
        let mut parts: Vec<&str> = topic.split(self.separator.as_str()).collect();
        while parts.last() == Some(&"") {
            parts.pop();
        }
        (parts.len() >= 2).then(|| parts[0].to_owned())
    }

    pub fn topic_source(&self, topic: &str) -> Option<String> {
        match &self.identity_source {
            Some(source) if !Self::looks_like_heartbeat(topic) => Some(source.clone()),
            _ => self.default_topic_source(topic),
        }
    }

    pub fn upstream_topic(&self, topic: &str) -> Option<String> {
        if self.identity_source.is_some() && !Self::looks_like_heartbeat(topic) {
            return Some(topic.to_owned());
        }
        let source = self.default_topic_source(topic)?;
        Some(topic[source.len() + self.separator.len()..].to_owned())
    }

    /// The topic's name on the cluster it was first written to.
    pub fn original_topic(&self, topic: &str) -> String {
        match self.upstream_topic(topic) {
            Some(up) if up != topic => self.original_topic(&up),
            _ => topic.to_owned(),
        }
    }

    fn internal_separator(&self) -> &str {
        if self.internal_separator_enabled {
            &self.separator
        } else {
            "."
        }
    }

    fn internal_suffix(&self) -> String {
        format!("{}internal", self.internal_separator())
    }

    fn checkpoints_suffix(&self) -> String {
        format!(
            "{}checkpoints{}",
            self.internal_separator(),
            self.internal_suffix()
        )
    }

    pub fn offset_syncs_topic(&self, alias: &str) -> String {
        format!(
            "mm2-offset-syncs{}{alias}{}",
            self.internal_separator(),
            self.internal_suffix()
        )
    }

    pub fn checkpoints_topic(&self, alias: &str) -> String {
        format!("{alias}{}", self.checkpoints_suffix())
    }

    pub fn is_heartbeats_topic(&self, topic: &str) -> bool {
        self.original_topic(topic) == HEARTBEATS_TOPIC
    }

    pub fn is_checkpoints_topic(&self, topic: &str) -> bool {
        topic.ends_with(&self.checkpoints_suffix())
    }

    pub fn is_mm2_internal_topic(&self, topic: &str) -> bool {
        topic.ends_with(&self.internal_suffix())
    }

    pub fn is_internal_topic(&self, topic: &str) -> bool {
        self.is_mm2_internal_topic(topic)
            || topic.starts_with("__")
            || topic.starts_with('.')
            || topic.ends_with("-internal")
            || topic.ends_with(".internal")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_policy_names_as_apache() {
        let p = ReplicationPolicy::default_policy(".", true);
        assert_eq!(p.format_remote_topic("us", "orders"), "us.orders");
        assert_eq!(p.topic_source("us.orders").as_deref(), Some("us"));
        assert_eq!(
            p.upstream_topic("eu.us.orders").as_deref(),
            Some("us.orders")
        );
        assert_eq!(p.original_topic("eu.us.orders"), "orders");
        assert_eq!(p.topic_source("orders"), None);
        assert_eq!(p.topic_source("orders."), None);
        assert_eq!(p.offset_syncs_topic("b"), "mm2-offset-syncs.b.internal");
        assert_eq!(p.checkpoints_topic("a"), "a.checkpoints.internal");
        assert!(p.is_heartbeats_topic("a.b.heartbeats"));
        assert!(p.is_internal_topic("__consumer_offsets"));
        assert!(p.is_internal_topic("connect-offsets-internal"));
        let dash = ReplicationPolicy::default_policy("_", false);
        assert_eq!(dash.format_remote_topic("us", "t"), "us_t");
        assert_eq!(dash.offset_syncs_topic("b"), "mm2-offset-syncs.b.internal");
        let dash = ReplicationPolicy::default_policy("_", true);
        assert_eq!(dash.offset_syncs_topic("b"), "mm2-offset-syncs_b_internal");
        assert_eq!(dash.checkpoints_topic("a"), "a_checkpoints_internal");
    }

    #[test]
    fn identity_policy_keeps_names_but_not_for_heartbeats() {
        let p = ReplicationPolicy::identity(".", true, "us");
        assert_eq!(p.format_remote_topic("us", "orders"), "orders");
        assert_eq!(p.format_remote_topic("us", "heartbeats"), "us.heartbeats");
        assert_eq!(p.topic_source("orders").as_deref(), Some("us"));
        assert_eq!(p.upstream_topic("orders").as_deref(), Some("orders"));
        assert_eq!(p.original_topic("orders"), "orders");
    }
}
