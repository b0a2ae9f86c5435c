//! The OpenAPI document as a check on what the server really answers: every reply a test
//! harness receives (`common_server`, `bridge_server`) goes through [`conform`], which
//! fails the test when the route does not document the status, or the body does not fit
//! the documented schema (an error body's `code` must be one its status names).
//!
//! The schema check covers the keywords the document uses (`$ref`, `allOf`, `oneOf`,
//! `type`, `enum`, `const`, `required`, `properties`, `additionalProperties`, `items`,
//! `minItems`/`maxItems`, `maxLength`); `pattern` is left to schemathesis (CI), which
//! checks the whole of JSON Schema.
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

/// (METHOD, template, status) of every documented reply seen in this test binary.
static SEEN: Mutex<BTreeSet<(String, String, u16)>> = Mutex::new(BTreeSet::new());

pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(oq::server::openapi::document)
}

/// Every (METHOD, template, status) the document names.
pub fn documented() -> BTreeSet<(String, String, u16)> {
    let mut out = BTreeSet::new();
    for (path, ops) in document()["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            for status in op["responses"].as_object().unwrap().keys() {
                out.insert((method.to_uppercase(), path.clone(), status.parse().unwrap()));
            }
        }
    }
    out
}

/// What [`conform`] has seen so far in this test binary.
pub fn seen() -> BTreeSet<(String, String, u16)> {
    SEEN.lock().unwrap().clone()
}

/// The documented path template `path` (no query) is an instance of.
pub fn template(path: &str) -> Option<&'static str> {
    let path = path.split('?').next().unwrap();
    let segs: Vec<&str> = path.split('/').collect();
    document()["paths"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|t| {
            let ts: Vec<&str> = t.split('/').collect();
            ts.len() == segs.len()
                && ts
                    .iter()
                    .zip(&segs)
                    .all(|(t, s)| (t.starts_with('{') && !s.is_empty()) || t == s)
        })
        // A literal segment wins over a parameter (none overlap today).
        .max_by_key(|t| t.split('/').filter(|s| !s.starts_with('{')).count())
        .map(String::as_str)
}

/// Panics when `status` and `body` are not what the document says `method path` answers.
pub fn conform(method: &str, path: &str, status: u16, text: &str) {
    if let Err(e) = check(method, path, status, text) {
        panic!("{method} {path} answered {status} {text}\n  against /openapi.json: {e}");
    }
}

fn check(method: &str, path: &str, status: u16, text: &str) -> Result<(), String> {
    let body: Option<Value> = serde_json::from_str(text).ok();
    let code = body
        .as_ref()
        .and_then(|b| b["code"].as_str().map(str::to_string));
    let Some(tpl) = template(path) else {
        // No route: the fallback's 404 in oq's error format.
        return match (status, code.as_deref()) {
            (404, Some("not_found")) => Ok(()),
            _ => Err("no documented route, and not the 404 `not_found` fallback".into()),
        };
    };
    let Some(op) = document()["paths"][tpl].get(method.to_lowercase()) else {
        return match (status, code.as_deref()) {
            (405, Some("method_not_allowed")) => Ok(()),
            _ => Err(format!("{method} is not documented on {tpl}, and not 405")),
        };
    };
    let Some(response) = op["responses"].get(status.to_string()) else {
        return Err(format!("{tpl} documents no {status}"));
    };
    SEEN.lock()
        .unwrap()
        .insert((method.to_uppercase(), tpl.to_string(), status));
    let Some(content) = response.get("content") else {
        return Ok(());
    };
    let Some(json) = content.get("application/json") else {
        return Ok(()); // the event stream
    };
    let body = body.ok_or("the body is not JSON")?;
    validate(&json["schema"], &body, "$")
}

/// `value` against `schema` (the subset the document uses), naming where it fails.
pub fn validate(schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.strip_prefix("#/components/schemas/").unwrap();
        return validate(&document()["components"]["schemas"][name], value, at);
    }
    if let Some(all) = schema["allOf"].as_array() {
        for s in all {
            validate(s, value, at)?;
        }
    }
    if let Some(one) = schema["oneOf"].as_array() {
        let fits = one
            .iter()
            .filter(|s| validate(s, value, at).is_ok())
            .count();
        if fits != 1 {
            return Err(format!("{at}: fits {fits} of oneOf's {}", one.len()));
        }
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            t => vec![t.as_str().unwrap()],
        };
        if !types.iter().any(|t| is_type(t, value)) {
            return Err(format!("{at}: {value} is not {types:?}"));
        }
    }
    if let Some(e) = schema["enum"].as_array() {
        if !e.contains(value) {
            return Err(format!("{at}: {value} is not one of {e:?}"));
        }
    }
    if let Some(c) = schema.get("const") {
        if c != value {
            return Err(format!("{at}: {value} is not {c}"));
        }
    }
    if let (Some(max), Some(s)) = (schema["maxLength"].as_u64(), value.as_str()) {
        if s.chars().count() as u64 > max {
            return Err(format!("{at}: longer than {max}"));
        }
    }
    if let Value::Object(obj) = value {
        for r in schema["required"].as_array().into_iter().flatten() {
            if !obj.contains_key(r.as_str().unwrap()) {
                return Err(format!("{at}: {r} is required"));
            }
        }
        let props = schema["properties"].as_object();
        for (k, v) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(s) => validate(s, v, &format!("{at}.{k}"))?,
                None if schema["additionalProperties"] == false => {
                    return Err(format!("{at}: {k} is not a documented property"));
                }
                None => {}
            }
        }
    }
    if let Value::Array(items) = value {
        if let Some(max) = schema["maxItems"].as_u64() {
            if items.len() as u64 > max {
                return Err(format!("{at}: more than {max} items"));
            }
        }
        if let Some(min) = schema["minItems"].as_u64() {
            if (items.len() as u64) < min {
                return Err(format!("{at}: fewer than {min} items"));
            }
        }
        if let Some(s) = schema.get("items") {
            for (i, v) in items.iter().enumerate() {
                validate(s, v, &format!("{at}[{i}]"))?;
            }
        }
    }
    Ok(())
}

fn is_type(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => false,
    }
}
