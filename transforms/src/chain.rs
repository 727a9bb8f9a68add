//! The transformation chain of a connector (`transforms`, `transforms.<alias>.type|predicate|negate`,
//! `predicates`, `predicates.<alias>.type`), Apache's `ConnectorConfig.enrich` for validation,
//! and the conversion of source and sink records to and from [`Record`].

use std::collections::HashSet;
use std::sync::Arc;

use connect_api::config::plugin_version::{mismatch, version_requirement};
use connect_api::config::validators::{ParsedValues, Recommender, lambda};
use connect_api::config::{
    ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance, TypedValue, Width,
    originals_with_prefix, parse_type,
};
use connect_api::record::{SinkRecord, SourceRecord};
use connect_api::{ConnectError, PluginType, Result};

use crate::registry::{Found, lookup};
use crate::{Plugin, Predicate, Record, Transformation};

pub const TRANSFORMS_CONFIG: &str = "transforms";
pub const PREDICATES_CONFIG: &str = "predicates";
pub const TYPE_CONFIG: &str = "type";
/// KIP-891: a transformation's or predicate's version requirement (`transforms.<alias>.plugin.version`).
pub const PLUGIN_VERSION_CONFIG: &str = "plugin.version";
pub const PREDICATE_CONFIG: &str = "predicate";
pub const NEGATE_CONFIG: &str = "negate";

/// A transform that failed on a record: the class that failed (for the dead-letter queue's
/// `__connect.errors.class.name`) and the error.
#[derive(Debug)]
pub struct TransformError {
    pub class: String,
    pub error: ConnectError,
}

struct Stage {
    class: String,
    transform: Box<dyn Transformation>,
    predicate: Option<(Box<dyn Predicate>, bool)>,
}

/// The configured transforms of a connector, applied in `transforms` order.
#[derive(Default)]
pub struct TransformChain {
    stages: Vec<Stage>,
}

fn aliases(props: &ConfigMap, key: &str) -> Result<Vec<String>> {
    match props.get(key) {
        None => Ok(Vec::new()),
        Some(raw) => match parse_type(raw, T::List) {
            Ok(TypedValue::List(items)) => {
                let mut seen = HashSet::new();
                Ok(items
                    .into_iter()
                    .filter(|a| seen.insert(a.clone()))
                    .collect())
            }
            _ => Ok(Vec::new()),
        },
    }
}

/// The class `class` names, of kind `kind` (the errors Apache's `ConnectorConfig` gives).
fn resolve(class: &str, key: &str, kind: PluginType) -> Result<Found> {
    let found = lookup(class, Some(kind)).ok_or_else(|| {
        ConnectError::invalid_value(key, class, &format!("Class {class} could not be found."))
    })?;
    if found.plugin_type() != kind {
        return Err(ConnectError::invalid_value(
            key,
            class,
            &format!("Not a {}", kind_name(kind)),
        ));
    }
    Ok(found)
}

fn instantiate(class: &str, key: &str, kind: PluginType) -> Result<(Found, Plugin)> {
    let found = resolve(class, key, kind)?;
    let plugin = found.create()?;
    Ok((found, plugin))
}

/// KIP-891: a `plugin.version` requirement the installed class does not meet fails the stage
/// (a config stored by another worker; validation refuses it before), as Apache's plugin
/// loader fails it.
fn check_version(found: &Found, requirement: Option<String>) -> Result<()> {
    let Some(range) = version_requirement(requirement.as_deref()).map_err(ConnectError::config)?
    else {
        return Ok(());
    };
    match mismatch(found.class(), &found.version(), &range) {
        Some(message) => Err(ConnectError::config(message)),
        None => Ok(()),
    }
}

fn kind_name(kind: PluginType) -> &'static str {
    if kind == PluginType::Predicate {
        "Predicate"
    } else {
        "Transformation"
    }
}

impl TransformChain {
    /// Builds and configures every stage of a connector config; the first failure is returned
    /// (the task fails with it, as Apache's `transformationStages` does).
    pub fn from_config(props: &ConfigMap) -> Result<Self> {
        let mut stages = Vec::new();
        for alias in aliases(props, TRANSFORMS_CONFIG)? {
            let prefix = format!("{TRANSFORMS_CONFIG}.{alias}.");
            let type_key = format!("{prefix}{TYPE_CONFIG}");
            let class = props
                .get(&type_key)
                .ok_or_else(|| ConnectError::missing_required(&type_key))?;
            let (found, Plugin::Transformation(mut transform)) =
                instantiate(class, &type_key, PluginType::Transformation)?
            else {
                unreachable!("instantiate checked the kind")
            };
            let mut own = originals_with_prefix(props, &prefix);
            let predicate_alias = own.remove(PREDICATE_CONFIG);
            let negate = own.remove(NEGATE_CONFIG);
            own.remove(TYPE_CONFIG);
            check_version(&found, own.remove(PLUGIN_VERSION_CONFIG))?;
            transform.configure(&own)?;
            let predicate = match predicate_alias {
                None => None,
                Some(p) => {
                    let pprefix = format!("{PREDICATES_CONFIG}.{p}.");
                    let ptype = format!("{pprefix}{TYPE_CONFIG}");
                    let pclass = props
                        .get(&ptype)
                        .ok_or_else(|| ConnectError::missing_required(&ptype))?;
                    let (pfound, Plugin::Predicate(mut predicate)) =
                        instantiate(pclass, &ptype, PluginType::Predicate)?
                    else {
                        unreachable!("instantiate checked the kind")
                    };
                    let mut pown = originals_with_prefix(props, &pprefix);
                    pown.remove(TYPE_CONFIG);
                    check_version(&pfound, pown.remove(PLUGIN_VERSION_CONFIG))?;
                    predicate.configure(&pown)?;
                    let negate = negate.is_some_and(|n| n.trim().eq_ignore_ascii_case("true"));
                    Some((predicate, negate))
                }
            };
            stages.push(Stage {
                class: found.class().to_owned(),
                transform,
                predicate,
            });
        }
        Ok(Self { stages })
    }

    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    pub fn len(&self) -> usize {
        self.stages.len()
    }

    /// Applies every stage in order; `Ok(None)` when a stage dropped the record.
    pub fn apply(&self, mut record: Record) -> std::result::Result<Option<Record>, TransformError> {
        Ok(self.apply_in_place(&mut record)?.then_some(record))
    }

    /// [`TransformChain::apply`] on a record in place; `false` when a stage dropped it.
    pub fn apply_in_place(&self, record: &mut Record) -> std::result::Result<bool, TransformError> {
        for stage in &self.stages {
            if let Some((p, negate)) = &stage.predicate {
                match p.try_test(record) {
                    Ok(matched) if matched == *negate => continue,
                    Ok(_) => {}
                    Err(error) => {
                        return Err(TransformError {
                            class: stage.class.clone(),
                            error,
                        });
                    }
                }
            }
            match stage.transform.apply(record) {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(error) => {
                    return Err(TransformError {
                        class: stage.class.clone(),
                        error,
                    });
                }
            }
        }
        Ok(true)
    }

    /// Whether a stage answers batches cheaper than records one by one (a Java one): the
    /// runtime then uses [`TransformChain::apply_batch_in_place`].
    pub fn prefers_batches(&self) -> bool {
        self.stages.iter().any(|s| s.transform.prefers_batches())
    }

    /// [`TransformChain::apply_in_place`] on every record of a batch, stage by stage: each stage
    /// (and its predicate) gets, in one call, the records the stages before it kept. One result
    /// per record, in order: `Ok(false)` dropped, an error the first stage that failed on it.
    /// The records a stage sees and their order are those of record-by-record application; only
    /// the interleaving of different stages' calls differs.
    pub fn apply_batch_in_place(
        &self,
        records: &mut [Record],
    ) -> Vec<std::result::Result<bool, TransformError>> {
        let mut ended: Vec<Option<std::result::Result<bool, TransformError>>> =
            (0..records.len()).map(|_| None).collect();
        let failed = |stage: &Stage, error: ConnectError| {
            Some(Err(TransformError {
                class: stage.class.clone(),
                error,
            }))
        };
        for stage in &self.stages {
            let alive: Vec<usize> = (0..records.len()).filter(|i| ended[*i].is_none()).collect();
            if alive.is_empty() {
                break;
            }
            let selected: Vec<usize> = match &stage.predicate {
                None => alive,
                Some((p, negate)) => {
                    let refs: Vec<&Record> = alive.iter().map(|i| &records[*i]).collect();
                    let mut tested = p.try_test_batch(&refs).into_iter();
                    let mut selected = Vec::with_capacity(alive.len());
                    for i in alive {
                        match tested.next() {
                            Some(Ok(matched)) if matched == *negate => {}
                            Some(Ok(_)) => selected.push(i),
                            Some(Err(e)) => ended[i] = failed(stage, e),
                            None => {
                                ended[i] = failed(
                                    stage,
                                    ConnectError::fatal(
                                        "the predicate answered fewer records than it was given",
                                    ),
                                )
                            }
                        }
                    }
                    selected
                }
            };
            if selected.is_empty() {
                continue;
            }
            let mut refs: Vec<&mut Record> = Vec::with_capacity(selected.len());
            let mut wanted = selected.iter().peekable();
            for (i, r) in records.iter_mut().enumerate() {
                if wanted.peek() == Some(&&i) {
                    refs.push(r);
                    wanted.next();
                }
            }
            let mut applied = stage.transform.apply_batch(&mut refs).into_iter();
            for i in selected {
                match applied.next() {
                    Some(Ok(true)) => {}
                    Some(Ok(false)) => ended[i] = Some(Ok(false)),
                    Some(Err(e)) => ended[i] = failed(stage, e),
                    None => {
                        ended[i] = failed(
                            stage,
                            ConnectError::fatal(
                                "the transformation answered fewer records than it was given",
                            ),
                        )
                    }
                }
            }
        }
        ended.into_iter().map(|e| e.unwrap_or(Ok(true))).collect()
    }

    /// [`TransformChain::apply`] on a source record (partition and offset kept).
    pub fn apply_source(
        &self,
        record: SourceRecord,
    ) -> std::result::Result<Option<SourceRecord>, TransformError> {
        if self.stages.is_empty() {
            return Ok(Some(record));
        }
        Ok(self.apply_source_data(&record)?.map(|r| SourceRecord {
            source_partition: record.source_partition,
            source_offset: record.source_offset,
            topic: r.topic,
            kafka_partition: r.kafka_partition,
            key_schema: r.key_schema,
            key: r.key,
            value_schema: r.value_schema,
            value: r.value,
            timestamp: r.timestamp,
            headers: r.headers,
        }))
    }

    /// [`TransformChain::apply`] on the data of a source record, which the caller keeps (the
    /// runtime needs the original for its offsets and `commitRecord`); the source partition and
    /// offset are not copied.
    #[inline]
    pub fn apply_source_data(
        &self,
        record: &SourceRecord,
    ) -> std::result::Result<Option<Record>, TransformError> {
        let mut data = Record::copy_of_source(record);
        Ok(self.apply_in_place(&mut data)?.then_some(data))
    }

    /// [`TransformChain::apply`] on a sink record (offset, timestamp type and the original
    /// topic/partition/offset kept, as Java's `SinkRecord.newRecord` does).
    pub fn apply_sink(
        &self,
        record: SinkRecord,
    ) -> std::result::Result<Option<SinkRecord>, TransformError> {
        if self.stages.is_empty() {
            return Ok(Some(record));
        }
        let SinkRecord {
            topic,
            kafka_partition,
            kafka_offset,
            key_schema,
            key,
            value_schema,
            value,
            timestamp,
            timestamp_type,
            headers,
            original_topic,
            original_kafka_partition,
            original_kafka_offset,
        } = record;
        let r = Record {
            topic,
            kafka_partition: Some(kafka_partition),
            key_schema,
            key,
            value_schema,
            value,
            timestamp,
            headers,
            kafka_offset: Some(kafka_offset),
        };
        Ok(self.apply(r)?.map(|r| SinkRecord {
            topic: r.topic,
            kafka_partition: r.kafka_partition.unwrap_or(kafka_partition),
            kafka_offset,
            key_schema: r.key_schema,
            key: r.key,
            value_schema: r.value_schema,
            value: r.value,
            timestamp: r.timestamp,
            timestamp_type,
            headers: r.headers,
            original_topic,
            original_kafka_partition,
            original_kafka_offset,
        }))
    }
}

/// Apache's `ConnectorConfig.enrich`: `base` plus, for every transform alias, the group
/// `Transforms: <alias>` with `transforms.<alias>.type`, `.predicate`, `.negate` and the
/// transform's own keys; for every predicate alias, `Predicates: <alias>` with `.type` and the
/// predicate's keys. Validating a config against the result (`ConfigDef::validate`) reports an
/// unknown class, a missing or invalid key, `negate` without `predicate` and a predicate alias
/// that `predicates` does not define, each on its key.
pub fn enrich(base: ConfigDef, props: &ConfigMap) -> ConfigDef {
    let mut def = base;
    let predicate_aliases = aliases(props, PREDICATES_CONFIG).unwrap_or_default();
    for (kind, list, group_name) in [
        (PluginType::Transformation, TRANSFORMS_CONFIG, "Transforms"),
        (PluginType::Predicate, PREDICATES_CONFIG, "Predicates"),
    ] {
        for alias in aliases(props, list).unwrap_or_default() {
            let prefix = format!("{list}.{alias}.");
            let group = format!("{group_name}: {alias}");
            let type_key = format!("{prefix}{TYPE_CONFIG}");
            let kind_lower = kind_name(kind).to_ascii_lowercase();
            // The class's own definition (a provided class's may fail: its host's error is
            // then the type key's).
            let found = props
                .get(&type_key)
                .and_then(|c| lookup(c, Some(kind)))
                .filter(|f| f.plugin_type() == kind);
            let plugin = found.as_ref().map(Found::config_def);
            let def_error = match &plugin {
                Some(Err(e)) => Some(e.to_string()),
                _ => None,
            };
            let (p, props_c) = (prefix.clone(), props.clone());
            let validator = lambda(
                format!("valid configs for {alias} {kind_lower}"),
                move |name, v| {
                    if kind == PluginType::Transformation {
                        let negate = format!("{p}{NEGATE_CONFIG}");
                        let predicate = format!("{p}{PREDICATE_CONFIG}");
                        if props_c.contains_key(&negate) && !props_c.contains_key(&predicate) {
                            return Err(ConnectError::config(format!(
                                "Config '{negate}' was provided but there is no config '{predicate}' defining a predicate to be negated."
                            )));
                        }
                    }
                    if let Some(class) = v.and_then(TypedValue::as_str) {
                        instantiate(class, name, kind)?;
                    }
                    match &def_error {
                        Some(e) => Err(ConnectError::config(e.clone())),
                        None => Ok(()),
                    }
                },
            );
            def = def.define(
                ConfigKey::new(
                    &type_key,
                    T::Class,
                    Importance::High,
                    format!("Class for the '{alias}' {kind_lower}."),
                )
                .validator(validator)
                .recommender(Arc::new(ClassesOf(kind)))
                .group(group.clone(), 0)
                .width(Width::Long)
                .display_name(format!("{} type for {alias}", kind_name(kind))),
            );
            // KIP-891: the class's version (Connect 4.4 defines it after the type): the installed
            // one by default and recommended; a requirement it does not meet is an error here.
            let version_key = format!("{prefix}{PLUGIN_VERSION_CONFIG}");
            let installed = found.as_ref().map(Found::version);
            let (class, have) = (
                found.as_ref().map(|f| f.class().to_owned()),
                installed.clone(),
            );
            let mut version = ConfigKey::new(
                &version_key,
                T::String,
                Importance::High,
                format!("Version of the '{alias}' {kind_lower}."),
            )
            .validator(lambda(
                "a version range the installed plugin meets",
                move |_, v| {
                    let wanted = version_requirement(v.and_then(TypedValue::as_str))
                        .map_err(ConnectError::config)?;
                    match (wanted, &class, &have) {
                        (Some(range), Some(class), Some(have)) => {
                            match mismatch(class, have, &range) {
                                Some(message) => Err(ConnectError::config(message)),
                                None => Ok(()),
                            }
                        }
                        _ => Ok(()),
                    }
                },
            ))
            .group(group.clone(), 1)
            .width(Width::Long)
            .display_name(format!("{} version for {alias}", kind_name(kind)));
            version = match installed {
                Some(v) => version
                    .default_value(TypedValue::String(v.clone()))
                    .recommender(Arc::new(InstalledVersion(v))),
                None => version.default_null(),
            };
            def = def.define(version);
            let Some(Ok(plugin_def)) = plugin else {
                continue;
            };
            let mut own = ConfigDef::new();
            if kind == PluginType::Transformation {
                let defined = predicate_aliases.clone();
                own = own
                    .define(
                        ConfigKey::new(PREDICATE_CONFIG, T::String, Importance::Medium, "The alias of a predicate used to determine whether to apply this transformation.")
                            .default_null()
                            .validator(lambda("a defined predicate alias", move |name, v| match v.and_then(TypedValue::as_str) {
                                Some(p) if !defined.iter().any(|d| d == p) => Err(ConnectError::invalid_value(
                                    name,
                                    p,
                                    &format!("Predicate alias {p} is not defined in '{PREDICATES_CONFIG}'"),
                                )),
                                _ => Ok(()),
                            })),
                    )
                    .define(
                        ConfigKey::new(NEGATE_CONFIG, T::Boolean, Importance::Medium, "Whether the configured predicate should be negated.")
                            .default_value(false),
                    );
            }
            for key in plugin_def.keys() {
                if kind == PluginType::Transformation
                    && (key.name == PREDICATE_CONFIG || key.name == NEGATE_CONFIG)
                {
                    continue;
                }
                own = own.define(key.clone());
            }
            def = embed(def, &prefix, &group, 2, &own);
        }
    }
    def
}

/// Recommends every class of one kind (transformations or predicates), built-in and provided,
/// sorted: Apache's `TransformationPluginRecommender` and `PredicatePluginRecommender`.
#[derive(Debug)]
struct ClassesOf(PluginType);

impl Recommender for ClassesOf {
    fn valid_values(&self, _name: &str, _parsed: &ParsedValues) -> Vec<TypedValue> {
        let mut classes: Vec<String> = crate::registry::plugin_infos()
            .into_iter()
            .filter(|p| p.plugin_type == self.0)
            .map(|p| p.class)
            .collect();
        classes.sort_unstable();
        classes.dedup();
        classes.into_iter().map(TypedValue::Class).collect()
    }

    fn visible(&self, _name: &str, _parsed: &ParsedValues) -> bool {
        true
    }
}

/// The one installed version of a class, recommended for its `plugin.version` key.
#[derive(Debug)]
struct InstalledVersion(String);

impl Recommender for InstalledVersion {
    fn valid_values(&self, _name: &str, _parsed: &ParsedValues) -> Vec<TypedValue> {
        vec![TypedValue::String(self.0.clone())]
    }

    fn visible(&self, _name: &str, _parsed: &ParsedValues) -> bool {
        true
    }
}

/// Java's `ConfigDef.embed`: every key of `child` under `prefix`, in `group` from `start`;
/// validators see the key name without the prefix, as Java's embedded validators do.
fn embed(
    mut def: ConfigDef,
    prefix: &str,
    group: &str,
    start: i32,
    child: &ConfigDef,
) -> ConfigDef {
    // Java embeds `child.sortedConfigs()`: keys without a group first, then by their group's
    // place (the order groups were first defined in), then by their own `order_in_group`, then
    // keys without a default, then by importance, then by name. (The built-in transforms' keys
    // have no group or order; a Java plugin's may: Debezium's keys have an order, so the
    // `negate` and `predicate` keys, which have none, come before them.)
    let mut groups: Vec<&str> = Vec::new();
    for k in child.keys() {
        if let Some(g) = k.group.as_deref()
            && !groups.contains(&g)
        {
            groups.push(g);
        }
    }
    let group_rank = |k: &ConfigKey| {
        k.group
            .as_deref()
            .map(|g| groups.iter().position(|x| *x == g).unwrap_or(usize::MAX))
    };
    let mut keys: Vec<&ConfigKey> = child.keys().iter().collect();
    keys.sort_by(|a, b| {
        (
            group_rank(a),
            a.order_in_group,
            !a.is_required(),
            importance_rank(a.importance),
            &a.name,
        )
            .cmp(&(
                group_rank(b),
                b.order_in_group,
                !b.is_required(),
                importance_rank(b.importance),
                &b.name,
            ))
    });
    for (i, key) in keys.into_iter().enumerate() {
        let mut k = key.clone();
        k.name = format!("{prefix}{}", key.name);
        k.group = Some(match &key.group {
            Some(g) => format!("{group}: {g}"),
            None => group.to_owned(),
        });
        k.order_in_group = start + i as i32;
        k.dependents = key
            .dependents
            .iter()
            .map(|d| format!("{prefix}{d}"))
            .collect();
        if let Some(inner) = key.validator.clone() {
            let p = prefix.to_owned();
            let inner: Arc<dyn connect_api::config::Validator> = inner;
            k.validator = Some(lambda(inner.describe(), move |name, v| {
                inner.ensure_valid(name.strip_prefix(&p).unwrap_or(name), v)
            }));
        }
        def = def.define(k);
    }
    def
}

fn importance_rank(i: Importance) -> u8 {
    match i {
        Importance::High => 0,
        Importance::Medium => 1,
        Importance::Low => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connect_api::data::Value;
    use connect_api::record::json_map;

    fn props(pairs: &[(&str, &str)]) -> ConfigMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// A batch through the chain ends as each record does through it alone: dropped by a
    /// predicate-guarded Filter, renamed by a RegexRouter, failed by ExtractField on a value
    /// that is no struct (the failing stage's class named), kept.
    #[test]
    fn a_batch_ends_as_its_records_do_one_by_one() {
        let chain = TransformChain::from_config(&props(&[
            ("transforms", "drop,fail,route"),
            ("transforms.drop.type", "Filter"),
            ("transforms.drop.predicate", "isDrop"),
            ("transforms.fail.type", "ExtractField$Value"),
            ("transforms.fail.field", "f"),
            ("transforms.fail.predicate", "isBad"),
            ("transforms.route.type", "RegexRouter"),
            ("transforms.route.regex", "keep(.*)"),
            ("transforms.route.replacement", "kept$1"),
            ("predicates", "isDrop,isBad"),
            ("predicates.isDrop.type", "TopicNameMatches"),
            ("predicates.isDrop.pattern", "drop.*"),
            ("predicates.isBad.type", "TopicNameMatches"),
            ("predicates.isBad.pattern", "bad.*"),
        ]))
        .unwrap();
        assert!(
            !chain.prefers_batches(),
            "built-in stages take records one by one"
        );
        let record = |t: &str| Record::new(t, None, connect_api::data::Value::Int32(1));
        let topics = ["keep1", "drop1", "bad1", "keep2", "drop2"];
        let mut batch: Vec<Record> = topics.iter().map(|t| record(t)).collect();
        let results = chain.apply_batch_in_place(&mut batch);
        assert_eq!(results.len(), topics.len());
        for ((topic, result), after) in topics.iter().zip(results).zip(&batch) {
            let mut alone = record(topic);
            match (chain.apply_in_place(&mut alone), result) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{topic}");
                    if a {
                        assert_eq!(&alone, after, "{topic}");
                    }
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a.class, b.class, "{topic}");
                    assert_eq!(a.error.to_string(), b.error.to_string(), "{topic}");
                }
                (a, b) => panic!("{topic}: alone {a:?}, in a batch {b:?}"),
            }
        }
        assert_eq!(batch[0].topic, "kept1");
        assert_eq!(batch[3].topic, "kept2");
    }

    fn errors(def: &ConfigDef, p: &ConfigMap) -> Vec<(String, Vec<String>)> {
        def.validate(p)
            .into_iter()
            .filter(|v| !v.errors.is_empty())
            .map(|v| (v.name, v.errors))
            .collect()
    }

    const T: &str = "org.apache.kafka.connect.transforms.";

    fn record(topic: &str) -> SourceRecord {
        SourceRecord::new(
            json_map("p", 1),
            json_map("o", 1),
            topic,
            None,
            Value::Map(vec![("id".into(), Value::Int64(1))]),
        )
    }

    #[test]
    fn chain_applies_in_order_with_predicates_and_negation() {
        let p = props(&[
            ("transforms", "route, drop"),
            ("transforms.route.type", &format!("{T}RegexRouter")),
            ("transforms.route.regex", "a-(.*)"),
            ("transforms.route.replacement", "b-$1"),
            ("transforms.drop.type", "Filter"),
            ("transforms.drop.predicate", "isB"),
            ("transforms.drop.negate", "true"),
            ("predicates", "isB"),
            (
                "predicates.isB.type",
                &format!("{T}predicates.TopicNameMatches"),
            ),
            ("predicates.isB.pattern", "b-.*"),
        ]);
        let chain = TransformChain::from_config(&p).unwrap();
        assert_eq!(chain.len(), 2);
        let out = chain.apply_source(record("a-x")).unwrap().unwrap();
        assert_eq!(out.topic, "b-x");
        assert_eq!(out.source_offset, Some(json_map("o", 1)));
        // Not routed, so not matching `b-.*`: the negated predicate lets Filter drop it.
        assert!(chain.apply_source(record("c-x")).unwrap().is_none());
    }

    #[test]
    fn chain_errors_name_the_failing_transform() {
        let p = props(&[
            ("transforms", "v2k"),
            ("transforms.v2k.type", &format!("{T}ValueToKey")),
            ("transforms.v2k.fields", "id"),
        ]);
        let chain = TransformChain::from_config(&p).unwrap();
        let mut bad = record("t");
        bad.value = Value::String("x".into());
        let e = chain.apply_source(bad).unwrap_err();
        assert_eq!(e.class, format!("{T}ValueToKey"));
        assert_eq!(
            e.error.to_string(),
            "Only Map objects supported in absence of schema for [copying fields from value to key], found: java.lang.String"
        );
        let sink = SinkRecord::new("t", 3, 42, None, Value::Null, None, Value::Map(vec![]));
        let out = chain.apply_sink(sink).unwrap().unwrap();
        assert_eq!((out.kafka_partition, out.kafka_offset), (3, 42));
        assert_eq!(out.key, Value::Map(vec![("id".into(), Value::Null)]));
    }

    #[test]
    fn building_fails_with_apaches_messages() {
        let err = |pairs: &[(&str, &str)]| {
            TransformChain::from_config(&props(pairs))
                .err()
                .map(|e| e.to_string())
                .unwrap()
        };
        assert_eq!(
            err(&[("transforms", "t")]),
            "Missing required configuration \"transforms.t.type\" which has no default value."
        );
        assert_eq!(
            err(&[
                ("transforms", "t"),
                ("transforms.t.type", "com.example.Nope")
            ]),
            "Invalid value com.example.Nope for configuration transforms.t.type: Class com.example.Nope could not be found."
        );
        assert_eq!(
            err(&[
                ("transforms", "t"),
                ("transforms.t.type", &format!("{T}InsertField$Value"))
            ]),
            "No field insertion configured"
        );
    }

    #[test]
    fn enrich_reports_each_problem_on_its_key() {
        let p = props(&[
            ("transforms", "a,b,c,d"),
            ("transforms.a.type", "com.example.Nope"),
            ("transforms.b.type", &format!("{T}RegexRouter")),
            ("transforms.b.regex", "x"),
            ("transforms.c.type", &format!("{T}Filter")),
            ("transforms.c.negate", "true"),
            ("transforms.d.type", &format!("{T}Filter")),
            ("transforms.d.predicate", "undefined"),
            ("predicates", "p"),
            ("predicates.p.type", &format!("{T}RegexRouter")),
        ]);
        let def = enrich(ConfigDef::new(), &p);
        assert_eq!(
            errors(&def, &p),
            vec![
                ("transforms.a.type".to_owned(), vec!["Invalid value com.example.Nope for configuration transforms.a.type: Class com.example.Nope could not be found.".to_owned()]),
                ("transforms.b.replacement".to_owned(), vec!["Missing required configuration \"transforms.b.replacement\" which has no default value.".to_owned()]),
                ("transforms.c.type".to_owned(), vec!["Config 'transforms.c.negate' was provided but there is no config 'transforms.c.predicate' defining a predicate to be negated.".to_owned()]),
                ("transforms.d.predicate".to_owned(), vec!["Invalid value undefined for configuration predicate: Predicate alias undefined is not defined in 'predicates'".to_owned()]),
                ("predicates.p.type".to_owned(), vec![format!("Invalid value {T}RegexRouter for configuration predicates.p.type: Not a Predicate")]),
            ]
        );
        // Keys and groups as Apache 4.4 shows them: type first, KIP-891's version, then the
        // embedded keys sorted (required first, then importance, then name).
        let b: Vec<(&str, &str, i32)> = def
            .keys()
            .iter()
            .filter(|k| k.name.starts_with("transforms.b."))
            .map(|k| {
                (
                    k.name.as_str(),
                    k.group.as_deref().unwrap(),
                    k.order_in_group,
                )
            })
            .collect();
        assert_eq!(
            b,
            [
                ("transforms.b.type", "Transforms: b", 0),
                ("transforms.b.plugin.version", "Transforms: b", 1),
                ("transforms.b.regex", "Transforms: b", 2),
                ("transforms.b.replacement", "Transforms: b", 3),
                ("transforms.b.negate", "Transforms: b", 4),
                ("transforms.b.predicate", "Transforms: b", 5),
            ]
        );
        assert_eq!(
            def.key("transforms.b.type").unwrap().display_name,
            "Transformation type for b"
        );
        let version = def.key("transforms.b.plugin.version").unwrap();
        assert_eq!(
            version.default,
            connect_api::config::DefaultValue::Value(TypedValue::String(crate::VERSION.into()))
        );
        // A version requirement the installed class does not meet is an error on its key.
        let too_new = props(&[
            ("transforms", "b"),
            ("transforms.b.type", "RegexRouter"),
            ("transforms.b.regex", "x"),
            ("transforms.b.replacement", "y"),
            ("transforms.b.plugin.version", "[9.0,)"),
        ]);
        let errors_of_too_new = errors(&enrich(ConfigDef::new(), &too_new), &too_new);
        assert_eq!(errors_of_too_new.len(), 1, "{errors_of_too_new:?}");
        assert_eq!(errors_of_too_new[0].0, "transforms.b.plugin.version");
        assert!(
            errors_of_too_new[0].1[0].contains("does not match the required version range"),
            "{errors_of_too_new:?}"
        );
        assert!(
            TransformChain::from_config(&too_new).is_err(),
            "nor does it run"
        );
        let ok = props(&[
            ("transforms", "b"),
            ("transforms.b.type", "RegexRouter"),
            ("transforms.b.regex", "x"),
            ("transforms.b.replacement", "y"),
        ]);
        assert!(errors(&enrich(ConfigDef::new(), &ok), &ok).is_empty());
    }
}
