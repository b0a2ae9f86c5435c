//! Architecture rules, checked on the source text in the manner of rust-analyzer's
//! `tidy.rs`: a rule of ARCHITECTURE.md that can be broken by a `use` line is a test.
//!
//! - The layers: `domain` names no IO crate and no other layer; `engine` names neither
//!   the doors nor the bridge; `source` names neither the server, the TUI nor the
//!   bridge; `bridge` sits below the server (never `crate::server`, never axum).
//! - Every module opens with its `//!` doc.
//! - No source file passes 450 lines, but the few named here, each with its reason (an
//!   entry that no longer needs to be here fails too, so the list only shrinks).
//!
//! Comment lines are not code: a doc may name what its module must not use.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 450;

/// Files allowed past [`MAX_LINES`], with why. Remove an entry when its file shrinks.
const LONG_FILES: &[(&str, &str)] = &[
    (
        "src/engine/sqlite/vfs.rs",
        "the store's fault-aware file layer (issue 15's); to be split by its owner",
    ),
    (
        "src/engine/sqlite/writer.rs",
        "the store's one writer (issue 15's); to be split by its owner",
    ),
];

/// (the directory, what its code must not name, why).
const LAYERS: &[(&str, &[&str], &str)] = &[
    (
        "src/domain",
        &[
            "tokio",
            "reqwest",
            "rusqlite",
            "axum",
            "crate::engine",
            "crate::server",
            "crate::source",
            "crate::tui",
            "crate::bridge",
        ],
        "the domain is pure: no IO, no other layer",
    ),
    (
        "src/engine",
        &[
            "crate::server",
            "crate::source",
            "crate::tui",
            "crate::bridge",
            "axum",
            "reqwest",
        ],
        "the engine is below every door",
    ),
    (
        "src/source",
        &["crate::server", "crate::tui", "crate::bridge"],
        "a source speaks to a server over the wire, never into it",
    ),
    (
        "src/mcp",
        &["crate::server", "crate::tui", "crate::bridge", "axum"],
        "the MCP tools run on the engine; the server mounts them, never the reverse",
    ),
    (
        "src/bridge",
        &["crate::server", "axum"],
        "the bridge sits below the server: engine, OpenCode client and a change notifier only",
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

/// The lines that are code: comments (`//`, `///`, `//!`) left out.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l))
}

/// A path segment boundary: `crate::server` must not match `crate::server_x`.
fn names(line: &str, forbidden: &str) -> bool {
    line.match_indices(forbidden).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + forbidden.len()..].chars().next();
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        before.is_none_or(|c| !ident(c)) && after.is_none_or(|c| !ident(c))
    })
}

#[test]
fn no_layer_names_what_sits_above_it() {
    let mut broken = Vec::new();
    for (dir, forbidden, why) in LAYERS {
        for file in rust_files(&root().join(dir)) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in code_lines(&text) {
                for f in *forbidden {
                    if names(line, f) {
                        broken.push(format!("{}:{n}: names `{f}` ({why})", rel(&file)));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
}

#[test]
fn every_module_opens_with_its_doc() {
    let missing: Vec<String> = rust_files(&root().join("src"))
        .into_iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !first.starts_with("//!")
        })
        .map(|f| rel(&f))
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a `//!` doc saying what lives there:\n{}",
        missing.join("\n")
    );
}

#[test]
fn source_files_stay_small() {
    let mut long = Vec::new();
    let mut stale = Vec::new();
    for file in rust_files(&root().join("src")) {
        let name = rel(&file);
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        let allowed = LONG_FILES.iter().any(|(f, _)| *f == name);
        if lines > MAX_LINES && !allowed {
            long.push(format!(
                "{name}: {lines} lines (at most {MAX_LINES}; split it)"
            ));
        }
        if lines <= MAX_LINES && allowed {
            stale.push(format!(
                "{name}: {lines} lines, no longer needs its LONG_FILES entry"
            ));
        }
    }
    for (f, _) in LONG_FILES {
        if !root().join(f).exists() {
            stale.push(format!("{f}: listed in LONG_FILES but gone"));
        }
    }
    assert!(long.is_empty(), "files too long:\n{}", long.join("\n"));
    assert!(stale.is_empty(), "stale allow-list:\n{}", stale.join("\n"));
}

#[test]
fn the_checker_sees_a_broken_rule() {
    // The rules themselves can fail: a forbidden name is found on a code line, not in a
    // comment, and not inside a longer identifier.
    let text = "//! never crate::server\nuse crate::server::AppState;\nuse crate::server_side;\n";
    let hits: Vec<usize> = code_lines(text)
        .filter(|(_, l)| names(l, "crate::server"))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(hits, vec![2]);
}
