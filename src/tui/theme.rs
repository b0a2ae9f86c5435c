//! Semantic styles: the view asks for a role ("selection", "inert"…), never a colour.
//!
//! Themes are TOML files, `role = "fg on bg modifiers"` in a `[roles]` table, with the
//! 16 ANSI colour names (so they read well on any palette). `dark`, `light`,
//! `high-contrast` and `monochrome` are embedded from `themes/` at the repository root;
//! `<config dir>/themes/NAME.toml` overrides or adds one. A theme is a patch over the
//! defaults: a missing role keeps its default. `NO_COLOR` selects `monochrome`, where
//! selection is reversed and focus bold, so nothing depends on colour.

use std::collections::BTreeMap;
use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

pub const EMBEDDED: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
    ("monochrome", include_str!("../../themes/monochrome.toml")),
];

#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    pub normal: Style,
    pub muted: Style,
    pub title: Style,
    /// The border and title of the focused pane.
    pub focus: Style,
    pub border: Style,
    pub selection: Style,
    pub banner: Style,
    pub inert: Style,
    pub key_hint: Style,
    pub error: Style,
    pub notice: Style,
    pub status: Style,
    pub accent: Style,
}

#[derive(Debug, Deserialize)]
struct ThemeFile {
    #[serde(default)]
    roles: BTreeMap<String, String>,
}

impl Default for Theme {
    fn default() -> Self {
        let reversed = Style::new().add_modifier(Modifier::REVERSED);
        let bold = Style::new().add_modifier(Modifier::BOLD);
        Theme {
            name: "monochrome".into(),
            normal: Style::new(),
            muted: Style::new().add_modifier(Modifier::DIM),
            title: bold,
            focus: bold,
            border: Style::new(),
            selection: reversed.add_modifier(Modifier::BOLD),
            banner: bold,
            inert: Style::new().add_modifier(Modifier::DIM),
            key_hint: bold,
            error: bold,
            notice: Style::new(),
            status: reversed,
            accent: bold,
        }
    }
}

fn color(word: &str) -> Option<Color> {
    Some(match word {
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" => Color::Gray,
        "darkgray" | "darkgrey" | "bright-black" => Color::DarkGray,
        "lightred" | "bright-red" => Color::LightRed,
        "lightgreen" | "bright-green" => Color::LightGreen,
        "lightyellow" | "bright-yellow" => Color::LightYellow,
        "lightblue" | "bright-blue" => Color::LightBlue,
        "lightmagenta" | "bright-magenta" => Color::LightMagenta,
        "lightcyan" | "bright-cyan" => Color::LightCyan,
        "white" | "bright-white" => Color::White,
        "default" | "reset" => Color::Reset,
        _ => return None,
    })
}

/// "yellow on black bold", "reversed", "default": a style from words.
pub fn parse_style(spec: &str) -> Result<Style, String> {
    let mut style = Style::new();
    let mut background = false;
    for word in spec.split_whitespace().map(str::to_ascii_lowercase) {
        if word == "on" {
            background = true;
            continue;
        }
        let modifier = match word.as_str() {
            "bold" => Some(Modifier::BOLD),
            "dim" => Some(Modifier::DIM),
            "italic" => Some(Modifier::ITALIC),
            "underlined" | "underline" => Some(Modifier::UNDERLINED),
            "reversed" | "reverse" => Some(Modifier::REVERSED),
            _ => None,
        };
        if let Some(m) = modifier {
            style = style.add_modifier(m);
        } else if let Some(c) = color(&word) {
            style = if background { style.bg(c) } else { style.fg(c) };
            background = false;
        } else {
            return Err(format!("unknown colour or modifier {word:?}"));
        }
    }
    Ok(style)
}

impl Theme {
    /// Lays a theme file's roles over the defaults.
    pub fn from_toml(name: &str, text: &str) -> Result<Theme, String> {
        let file: ThemeFile = toml::from_str(text).map_err(|e| format!("theme {name}: {e}"))?;
        let mut t = Theme {
            name: name.into(),
            ..Theme::default()
        };
        for (role, spec) in &file.roles {
            let style = parse_style(spec).map_err(|e| format!("theme {name}, role {role}: {e}"))?;
            let slot = match role.as_str() {
                "normal" => &mut t.normal,
                "muted" => &mut t.muted,
                "title" => &mut t.title,
                "focus" => &mut t.focus,
                "border" => &mut t.border,
                "selection" => &mut t.selection,
                "banner" => &mut t.banner,
                "inert" => &mut t.inert,
                "key_hint" => &mut t.key_hint,
                "error" => &mut t.error,
                "notice" => &mut t.notice,
                "status" => &mut t.status,
                "accent" => &mut t.accent,
                other => return Err(format!("theme {name}: unknown role {other:?}")),
            };
            *slot = style;
        }
        Ok(t)
    }

    pub fn embedded(name: &str) -> Option<Theme> {
        EMBEDDED
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(n, text)| Theme::from_toml(n, text).ok())
    }

    pub fn monochrome() -> Theme {
        Theme::embedded("monochrome").unwrap_or_default()
    }

    /// The theme to use: `NO_COLOR` wins, then the user's file, then the embedded one.
    pub fn load(name: &str, config_dir: Option<&Path>, no_color: bool) -> Result<Theme, String> {
        if no_color {
            return Ok(Theme::monochrome());
        }
        if let Some(dir) = config_dir {
            let path = dir.join("themes").join(format!("{name}.toml"));
            if let Ok(text) = std::fs::read_to_string(&path) {
                return Theme::from_toml(name, &text)
                    .map_err(|e| format!("{}: {e}", path.display()));
            }
        }
        Theme::embedded(name).ok_or_else(|| {
            format!("no theme named {name:?} (embedded: dark, light, high-contrast, monochrome)")
        })
    }
}
