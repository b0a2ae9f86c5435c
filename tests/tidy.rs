//! Architecture rules, checked on the source text in the manner of rust-analyzer's
//! `tidy.rs`: a rule of ARCHITECTURE.md that can be broken by a `use` line is a test.
//!
//! - The layers: `domain` names no IO crate and no other layer; `engine` names neither
//!   the doors nor the bridge; `source` names neither the server, the TUI nor the
//!   bridge; `bridge` sits below the server (never `crate::server`, never axum).
//! - `src/tui`'s modules import in layers, never in a cycle (ARCHITECTURE.md, the TUI).
//! - Every module opens with its `//!` doc.
//! - No source file passes 450 lines, but the few named here, each with its reason (an
//!   entry that no longer needs to be here fails too, so the list only shrinks).
//!
//! Comment lines are not code: a doc may name what its module must not use.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
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

/// The modules of `src/tui` a file names: `super::x` / `super::{x, y::z}` from a file
/// of `src/tui` itself, `super::super::x` from a file of one of its directories, and
/// `crate::tui::x` from either. A directory (`view/`, `keymap/`, `input/`) is one module.
fn tui_names(text: &str, nested: bool) -> Vec<String> {
    let prefixes: &[&str] = if nested {
        &["super::super::", "crate::tui::"]
    } else {
        &["super::", "crate::tui::"]
    };
    let mut out = Vec::new();
    for (_, line) in code_lines(text) {
        for prefix in prefixes {
            for (at, _) in line.match_indices(prefix) {
                let before = line[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let rest = &line[at + prefix.len()..];
                if !nested && rest.starts_with("super::") {
                    continue;
                }
                if let Some(group) = rest.strip_prefix('{') {
                    // The first segment of each item at the group's own depth.
                    let (mut depth, mut item, mut first) = (0, String::new(), true);
                    for c in group.chars() {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => break,
                            '}' => depth -= 1,
                            ',' if depth == 0 => {
                                out.push(std::mem::take(&mut item));
                                first = true;
                                continue;
                            }
                            ':' => first = false,
                            c if depth == 0 && first && (c.is_alphanumeric() || c == '_') => {
                                item.push(c);
                            }
                            _ => {}
                        }
                    }
                    out.push(item);
                } else {
                    out.push(
                        rest.chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect(),
                    );
                }
            }
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

/// `src/tui`'s module graph: each module, and the modules of `src/tui` it names.
fn tui_graph() -> BTreeMap<String, BTreeSet<String>> {
    let dir = root().join("src/tui");
    let mut graph = BTreeMap::<String, BTreeSet<String>>::new();
    for file in rust_files(&dir) {
        let inner = file.strip_prefix(&dir).unwrap();
        let parts: Vec<_> = inner
            .iter()
            .map(|p| p.to_string_lossy().to_string())
            .collect();
        let nested = parts.len() > 1;
        let module = parts[0].trim_end_matches(".rs").to_string();
        if module == "mod" {
            continue; // `tui/mod.rs` is the root that declares them all.
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let entry = graph.entry(module.clone()).or_default();
        entry.extend(
            tui_names(&text, nested)
                .into_iter()
                .filter(|n| *n != module),
        );
    }
    let known: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| known.contains(d));
    }
    graph
}

/// A cycle of the graph, as the path `a → b → … → a`, if there is one.
fn a_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth-first, with the path on the stack: an edge back into the path is a cycle.
    fn visit<'a>(
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        node: &'a str,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| *n == node) {
            let mut cycle: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(graph, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(graph, n, &mut Vec::new(), &mut done))
}

#[test]
fn the_tui_modules_form_no_import_cycle() {
    // ARCHITECTURE.md's TUI layering: `update` over `keys`/`auto`/`cleanup` over the
    // helpers over `model` and `effect` (data), over the leaves. A module that names one
    // above it makes a cycle, and a cycle is where a helper belongs lower down.
    let graph = tui_graph();
    assert!(graph.contains_key("update") && graph["update"].contains("keys"));
    if let Some(cycle) = a_cycle(&graph) {
        panic!(
            "src/tui's modules import in a cycle: {} (move what they share lower)",
            cycle.join(" → ")
        );
    }
}

#[test]
fn the_cycle_checker_sees_a_cycle() {
    let text = "//! super::c in a doc\nuse super::{a::X, b};\nfn f() { super::c::g(); }\n";
    assert_eq!(tui_names(text, false), vec!["a", "b", "c"]);
    assert_eq!(
        tui_names("use super::super::model::Model;\nuse super::x;\n", true),
        vec!["model"]
    );
    let edge = |a: &str, b: &str| (a.to_string(), [b.to_string()].into_iter().collect());
    let graph = [edge("a", "b"), edge("b", "c"), edge("c", "a")]
        .into_iter()
        .collect();
    assert_eq!(a_cycle(&graph).unwrap(), vec!["a", "b", "c", "a"]);
    let graph = [edge("a", "b"), edge("b", "c")].into_iter().collect();
    assert_eq!(a_cycle(&graph), None);
}
