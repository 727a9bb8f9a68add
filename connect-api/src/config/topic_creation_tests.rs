use super::*;
use crate::config::{ConfigInfos, source_connector_config_def};

fn props(pairs: &[(&str, &str)]) -> ConfigMap {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

const RF: &str = "topic.creation.default.replication.factor";
const PARTS: &str = "topic.creation.default.partitions";

#[test]
fn unused_without_keys_or_when_the_worker_disables_it() {
    let none = props(&[("name", "c")]);
    assert!(TopicCreation::from_config(&none, true).unwrap().is_none());
    assert!(topic_creation_errors(&none, true).is_empty());
    // Even invalid keys are not looked at when the worker has topic.creation.enable=false.
    let bad = props(&[(PARTS, "0")]);
    assert!(TopicCreation::from_config(&bad, false).unwrap().is_none());
    assert!(topic_creation_errors(&bad, false).is_empty());
}

/// Apache's messages: the default group's replication factor and partitions are required as
/// soon as any topic.creation.* key is set.
#[test]
fn default_group_settings_are_required() {
    let p = props(&[("topic.creation.default.cleanup.policy", "compact")]);
    assert_eq!(
        topic_creation_errors(&p, true),
        [
            (
                RF.to_owned(),
                format!("Missing required configuration \"{RF}\" which has no default value.")
            ),
            (
                PARTS.to_owned(),
                format!("Missing required configuration \"{PARTS}\" which has no default value.")
            ),
        ]
    );
    let err = TopicCreation::from_config(&p, true).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("Missing required configuration \"{RF}\" which has no default value.")
    );
    // topic.creation.groups alone is enough to need them.
    let groups_only = props(&[("topic.creation.groups", "a")]);
    assert_eq!(topic_creation_errors(&groups_only, true).len(), 2);
}

#[test]
fn invalid_values_have_apaches_messages() {
    let p = props(&[
        ("topic.creation.groups", "a, a"),
        (RF, "0"),
        (PARTS, "x"),
        ("topic.creation.a.partitions", "-2"),
        ("topic.creation.a.include", "ok.*, (unclosed"),
    ]);
    let errors = topic_creation_errors(&p, true);
    assert_eq!(
        errors[..3],
        [
            (
                "topic.creation.groups".to_owned(),
                "Invalid value [a, a] for configuration topic.creation.groups: Duplicate alias provided."
                    .to_owned()
            ),
            (
                RF.to_owned(),
                format!("Invalid value 0 for configuration {RF}: Replication factor must be positive and not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default")
            ),
            (
                PARTS.to_owned(),
                format!("Invalid value x for configuration {PARTS}: Not a number of type INT")
            ),
        ]
    );
    assert_eq!(errors[3].0, "topic.creation.a.include");
    assert!(
        errors[3].1.starts_with("Invalid value [ok.*, (unclosed] for configuration topic.creation.a.include: Syntax error in regular expression: "),
        "{errors:?}"
    );
    assert_eq!(
        errors[4],
        (
            "topic.creation.a.partitions".to_owned(),
            "Invalid value -2 for configuration topic.creation.a.partitions: Number of partitions must be positive, or -1 to use the broker's default".to_owned()
        )
    );
    assert_eq!(errors.len(), 5, "{errors:?}");
    // -1 is the broker's default, valid for both.
    let broker_defaults = props(&[(RF, "-1"), (PARTS, "-1")]);
    assert!(topic_creation_errors(&broker_defaults, true).is_empty());
    let tc = TopicCreation::from_config(&broker_defaults, true)
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            tc.default_group.replication_factor,
            tc.default_group.partitions
        ),
        (-1, -1)
    );
}

/// Groups are tried in `topic.creation.groups` order, exclusion over inclusion, whole names,
/// `default` last; a group inherits the default's replication factor and partitions but not
/// its topic configs; the default group's include/exclude are ignored.
#[test]
fn groups_match_in_order_with_default_last() {
    let p = props(&[
        ("topic.creation.groups", "default, compacted, wide"),
        (RF, "3"),
        (PARTS, "5"),
        ("topic.creation.default.cleanup.policy", "delete"),
        ("topic.creation.default.include", "nothing"),
        ("topic.creation.default.exclude", ".*"),
        ("topic.creation.compacted.include", "orders.*, users"),
        ("topic.creation.compacted.exclude", "orders-tmp"),
        ("topic.creation.compacted.cleanup.policy", "compact"),
        ("topic.creation.wide.include", "orders.*, .*-wide"),
        ("topic.creation.wide.partitions", "12"),
        ("topic.creation.wide.replication.factor", "1"),
    ]);
    assert!(topic_creation_errors(&p, true).is_empty());
    let tc = TopicCreation::from_config(&p, true).unwrap().unwrap();
    let names: Vec<&str> = tc.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["compacted", "wide"]);
    let pick = |t: &str| tc.find_first_group(t).name.clone();
    assert_eq!(pick("orders"), "compacted");
    assert_eq!(pick("orders-eu"), "compacted");
    assert_eq!(
        pick("orders-tmp"),
        "wide",
        "excluded from compacted, included by wide"
    );
    assert_eq!(pick("users"), "compacted");
    assert_eq!(pick("users2"), "default", "patterns match whole names");
    assert_eq!(pick("x-wide"), "wide");
    assert_eq!(pick("anything"), "default");
    let compacted = &tc.groups[0];
    assert_eq!((compacted.replication_factor, compacted.partitions), (3, 5));
    assert_eq!(
        compacted.configs,
        BTreeMap::from([("cleanup.policy".to_owned(), "compact".to_owned())])
    );
    let wide = &tc.groups[1];
    assert_eq!((wide.replication_factor, wide.partitions), (1, 12));
    assert!(
        wide.configs.is_empty(),
        "the default group's configs are not inherited"
    );
    assert_eq!(
        tc.default_group.configs,
        BTreeMap::from([("cleanup.policy".to_owned(), "delete".to_owned())])
    );
}

/// What Apache's validate answer shows of KIP-158: `topic.creation.groups` in the group
/// "Topic Creation" (before "Exactly Once Support", whose keys are numbered after it).
#[test]
fn validate_answer_shows_topic_creation_groups_like_apache() {
    let def = source_connector_config_def();
    let groups = def.groups();
    let tc = groups
        .iter()
        .position(|g| g == TOPIC_CREATION_GROUP)
        .unwrap();
    assert_eq!(groups[tc + 1], "Exactly Once Support");
    let key = def.key(TOPIC_CREATION_GROUPS_CONFIG).unwrap();
    assert_eq!(
        (key.group.as_deref(), key.order_in_group),
        (Some(TOPIC_CREATION_GROUP), 1)
    );
    assert_eq!(key.display_name, "Topic Creation Groups");
    let p = props(&[
        ("name", "c"),
        ("connector.class", "X"),
        (TOPIC_CREATION_GROUPS_CONFIG, "a,b,a"),
    ]);
    let infos = ConfigInfos::validate("X", &def, &p);
    let errors: Vec<&str> = infos.errors().collect();
    assert_eq!(
        errors,
        [
            "Invalid value [a, b, a] for configuration topic.creation.groups: Duplicate alias provided."
        ]
    );
}

/// The enriched definition embeds each group as Java's `ConfigDef.embed` does.
#[test]
fn enriched_definition_names_and_groups() {
    let p = props(&[("topic.creation.groups", "g1"), (RF, "2"), (PARTS, "4")]);
    let def = topic_creation_config_def(&p);
    let names: Vec<&str> = def.names().collect();
    assert_eq!(
        names,
        [
            "topic.creation.groups",
            "topic.creation.default.include",
            "topic.creation.default.exclude",
            RF,
            PARTS,
            "topic.creation.g1.include",
            "topic.creation.g1.exclude",
            "topic.creation.g1.replication.factor",
            "topic.creation.g1.partitions",
        ]
    );
    let g1 = def.key("topic.creation.g1.partitions").unwrap();
    assert_eq!(
        (g1.group.as_deref(), g1.order_in_group),
        (Some("Topic Creation: g1: Topic Creation: g1"), 3)
    );
    assert_eq!(g1.default, DefaultValue::Value(TypedValue::Int(4)));
    assert!(def.key(RF).unwrap().is_required());
}
