//! Request bodies. Connect answers malformed JSON with 500 (a Jackson exception); we answer
//! 400 with Connect's error body naming the problem, which clients handle the same way
//! (README, "Compatibility"). Scalars in config maps are coerced to strings, as Jackson does.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::http::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ApiError;

/// Parses a JSON body into `T`, or a 400 naming what is wrong.
pub fn parse<T: DeserializeOwned>(bytes: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("Malformed JSON request body: {e}"),
        )
    })
}

/// Converts an already parsed body into `T`, or a 400 naming what is wrong.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    serde_json::from_value(value).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("Malformed JSON request body: {e}"),
        )
    })
}

/// A config map from JSON: strings as they are, numbers and booleans as their text, JSON null
/// kept as `None` (the caller decides: an error on create, "remove" on PATCH).
pub fn config_map(value: Value) -> Result<BTreeMap<String, Option<String>>, ApiError> {
    let Value::Object(map) = value else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "Malformed JSON request body: a connector config must be a JSON object of strings",
        ));
    };
    map.into_iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Null => None,
                Value::String(s) => Some(s),
                Value::Bool(b) => Some(b.to_string()),
                Value::Number(n) => Some(n.to_string()),
                other => {
                    return Err(ApiError::new(
                        StatusCode::BAD_REQUEST,
                        format!("Malformed JSON request body: the value of config {k} must be a string, not {other}"),
                    ));
                }
            };
            Ok((k, v))
        })
        .collect()
}

/// A config map where JSON null is not allowed.
pub fn strict_config_map(value: Value) -> Result<BTreeMap<String, String>, ApiError> {
    config_map(value)?
        .into_iter()
        .map(|(k, v)| {
            v.map(|v| (k.clone(), v)).ok_or_else(|| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("Null value can not be supplied as the configuration value of {k}."),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_become_strings_and_null_is_kept() {
        let m = config_map(json!({"tasks.max": 1, "a": true, "b": "x", "c": null})).unwrap();
        assert_eq!(m["tasks.max"].as_deref(), Some("1"));
        assert_eq!(m["a"].as_deref(), Some("true"));
        assert_eq!(m["b"].as_deref(), Some("x"));
        assert_eq!(m["c"], None);
        assert!(strict_config_map(json!({"c": null})).is_err());
        assert!(config_map(json!({"nested": {"x": 1}})).is_err());
        assert!(config_map(json!([1])).is_err());
    }

    #[test]
    fn malformed_json_is_a_400() {
        let err = parse::<Value>(&Bytes::from_static(b"{not json")).unwrap_err();
        assert_eq!(err.status, StatusCode::BAD_REQUEST);
        assert!(err.message.starts_with("Malformed JSON request body"));
    }
}
