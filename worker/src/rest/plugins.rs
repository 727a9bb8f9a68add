//! `/connector-plugins`: the plugins compiled into this worker, their configs, validation.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, put};
use axum::{Json, Router};
use connect_api::config::connector::CONNECTOR_CLASS_CONFIG;
use connect_api::config::{
    ConfigDef, ConfigKeyInfo, sink_connector_config_def, source_connector_config_def,
};
use connect_api::{ConfigInfos, ConnectorInstance, PluginInfo, PluginType};
use serde::Deserialize;

use super::{ApiError, RestState, body};

pub(super) fn routes() -> Router<RestState> {
    Router::new()
        .route("/connector-plugins", get(list_connector_plugins))
        .route(
            "/connector-plugins/{plugin}/config",
            get(get_connector_config_def),
        )
        .route(
            "/connector-plugins/{plugin}/config/validate",
            put(validate_configs),
        )
}

#[derive(Debug, Deserialize)]
struct ListParams {
    #[serde(rename = "connectorsOnly", default = "yes")]
    connectors_only: bool,
}

fn yes() -> bool {
    true
}

async fn list_connector_plugins(
    State(s): State<RestState>,
    Query(params): Query<ListParams>,
) -> Result<Json<Vec<PluginInfo>>, ApiError> {
    let h = s.herder()?;
    let mut plugins = h.registry().connector_plugins();
    if !params.connectors_only {
        let mut others = Vec::new();
        for (class, kind) in connect_api::converter::builtin_converter_classes() {
            let plugin_type = match kind {
                "header_converter" => PluginType::HeaderConverter,
                _ => PluginType::Converter,
            };
            others.push(PluginInfo {
                class: class.to_owned(),
                plugin_type,
                version: Some(crate::version::CONNECT_API_VERSION.to_owned()),
            });
        }
        // The Java converters and header converters of plugin.path, with their versions.
        others.extend(connect_api::converter::provided_plugin_infos());
        others.extend(connect_transforms::plugin_infos());
        // After the connectors, as Apache lists them: transformations, predicates, converters,
        // header converters, each by class.
        let rank = |t: PluginType| match t {
            PluginType::Transformation => 0,
            PluginType::Predicate => 1,
            PluginType::Converter => 2,
            _ => 3,
        };
        others
            .sort_by(|a, b| (rank(a.plugin_type), &a.class).cmp(&(rank(b.plugin_type), &b.class)));
        plugins.extend(others);
    }
    Ok(Json(plugins))
}

/// KIP-769: the config of any plugin (connector, transformation, predicate, converter, header
/// converter); a connector's also lists the framework keys its own definition does not.
async fn get_connector_config_def(
    State(s): State<RestState>,
    Path(plugin): Path<String>,
) -> Result<Json<Vec<ConfigKeyInfo>>, ApiError> {
    let h = s.herder()?;
    let keys = |def: &ConfigDef| def.keys().iter().map(ConfigKeyInfo::from_key).collect();
    let Ok(instance) = h.registry().create_connector(&plugin) else {
        if let Some(p) = connect_transforms::registry::lookup(&plugin, None) {
            let def = p
                .config_def()
                .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
            return Ok(Json(keys(&def)));
        }
        if let Ok(c) = connect_api::converter::converter_for_class(&plugin) {
            return Ok(Json(keys(&c.config_def())));
        }
        if let Ok(c) = connect_api::converter::header_converter_for_class(&plugin) {
            return Ok(Json(keys(&c.config_def())));
        }
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("Unknown plugin {plugin}."),
        ));
    };
    let (own, framework) = match &instance {
        ConnectorInstance::Source(c) => (c.config_def(), source_connector_config_def()),
        ConnectorInstance::Sink(c) => (c.config_def(), sink_connector_config_def()),
    };
    // Connect 4.4 shows the connector's installed version as its `connector.plugin.version`
    // default here, and no converter versions.
    let framework = connect_api::config::connector::with_plugin_versions(
        framework,
        Some(&instance.version()),
        None,
    );
    let mut keys: Vec<ConfigKeyInfo> = keys(&own);
    keys.extend(
        framework
            .keys()
            .iter()
            .filter(|k| own.key(&k.name).is_none())
            .map(ConfigKeyInfo::from_key),
    );
    Ok(Json(keys))
}

/// Strips a trailing `Connector`, as Connect compares plugin names.
fn base_name(s: &str) -> &str {
    s.strip_suffix("Connector").unwrap_or(s)
}

/// Connect answers 500 with a Java class name for errors inside validation; we answer 400
/// with the message alone (README, "Compatibility").
async fn validate_configs(
    State(s): State<RestState>,
    Path(plugin): Path<String>,
    bytes: Bytes,
) -> Result<Json<ConfigInfos>, ApiError> {
    let h = s.herder()?;
    let config = body::strict_config_map(body::parse(&bytes)?)?;
    if let Some(class) = config.get(CONNECTOR_CLASS_CONFIG)
        && !base_name(class).ends_with(base_name(&plugin))
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("Included connector type {class} does not match request type {plugin}"),
        ));
    }
    let (infos, _) = h
        .validate(&config)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.message().to_owned()))?;
    Ok(Json(infos))
}
