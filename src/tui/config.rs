//! The TUI's part of `<config dir>/config.toml`: the `[tui]` and `[keys]` tables. Other
//! tables (`[profiles]`…) belong to other parts of oq and are ignored here. The config
//! dir is `OQ_CONFIG_DIR` when set, else the `directories` crate's one for `oq`
//! (`~/.config/oq` on Linux). A missing file is the defaults; a broken one is an error
//! that names the file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::keymap::KeysConfig;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TuiConfig {
    /// `dark`, `light`, `high-contrast`, `monochrome`, or a file in `<config>/themes/`.
    pub theme: String,
    /// Ring the terminal bell when a new question arrives.
    pub bell: bool,
    /// Send an OSC 9 / OSC 777 desktop notification when a new question arrives.
    pub notify: bool,
    /// How often the source's revision is polled, in milliseconds.
    pub poll_ms: u64,
    /// Keys that write in your name (accept, readiness, pause, delegate, dismiss) show
    /// what will be recorded and wait for the same key again or Enter.
    pub confirm: bool,
}

impl Default for TuiConfig {
    fn default() -> Self {
        TuiConfig {
            theme: "dark".into(),
            bell: true,
            notify: true,
            poll_ms: 500,
            confirm: true,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Config {
    #[serde(default)]
    pub tui: TuiConfig,
    #[serde(default)]
    pub keys: KeysConfig,
}

pub fn config_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("OQ_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    directories::ProjectDirs::from("", "", "oq").map(|d| d.config_dir().to_path_buf())
}

impl Config {
    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    pub fn load(dir: Option<&Path>) -> Result<Config, String> {
        let Some(dir) = dir else {
            return Ok(Config::default());
        };
        let path = dir.join("config.toml");
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }
}
