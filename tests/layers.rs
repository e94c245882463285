//! The layers the crate doc of src/lib.rs states, checked against every `crate::` path in
//! src/ (issue 34): a module imports modules of its own layer or of layers below it, never one
//! above. Unit tests (`tests.rs`, `*_tests.rs`, code after `#[cfg(test)]`) are not checked.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Layer number of each top-level module, from the crate doc's numbered list: each item
/// names its modules in backticks before its ` — `.
fn stated_layers(lib: &str) -> BTreeMap<String, usize> {
    // Each numbered item of the crate doc, its continuation lines joined.
    let mut items: Vec<(usize, String)> = Vec::new();
    for line in lib.lines().filter_map(|l| l.strip_prefix("//!")) {
        let numbered = line
            .trim_start()
            .split_once(". ")
            .and_then(|(n, rest)| Some((n.parse::<usize>().ok()?, rest)));
        match (numbered, items.last_mut()) {
            (Some((n, rest)), _) if line.starts_with(' ') && !line.starts_with("  ") => {
                items.push((n, rest.to_string()))
            }
            (_, Some((_, text))) if line.starts_with("    ") => {
                text.push(' ');
                text.push_str(line.trim());
            }
            _ => {}
        }
    }
    let mut out = BTreeMap::new();
    for (layer, text) in items {
        let Some((names, _)) = text.split_once(" — ") else {
            continue;
        };
        for name in names.split(',') {
            let name = name.trim().trim_matches('`');
            assert!(
                out.insert(name.to_string(), layer).is_none(),
                "`{name}` is in two layers of src/lib.rs's crate doc"
            );
        }
    }
    out
}

/// The crate's top-level modules: `lib` and each `mod` of src/lib.rs.
fn declared(lib: &str) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?.strip_suffix(';').map(String::from)
        })
        .collect();
    out.insert("lib".into());
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file below src/ (`["topics", "loops"]`; `[]` for lib.rs and main.rs).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The top-level modules one line of code names: `crate::x`, `crate::{x, y::z}`, and
/// `super::` paths that climb to the crate root.
fn named(code: &str, path: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            // The first name of each comma-separated part at the group's own depth.
            let (mut depth, mut part) = (0, String::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' | ',' if depth == 0 => {
                        out.push(ident(part.trim_start()).to_string());
                        part.clear();
                        if c == '}' {
                            break;
                        }
                        continue;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
                part.push(c);
            }
        } else {
            out.push(ident(after).to_string());
        }
        rest = after;
    }
    // `super::` from a file `depth` modules deep reaches the root after `depth` of them.
    let mut rest = code;
    while let Some(i) = rest.find("super::") {
        let mut tail = &rest[i..];
        let mut ups = 0;
        while let Some(t) = tail.strip_prefix("super::") {
            ups += 1;
            tail = t;
        }
        if ups == path.len() && !path.is_empty() {
            out.push(ident(tail).to_string());
        }
        rest = &rest[i + "super::".len() * ups..];
    }
    out.retain(|n| !n.is_empty() && n != "self");
    out
}

/// Each (importing module, imported module, file:line) of non-test code under src/.
fn imports() -> Vec<(String, String, String)> {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&root).unwrap().to_path_buf();
        let name = rel.file_name().unwrap().to_string_lossy().to_string();
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let path = module_path(&rel);
        let top = path.first().cloned().unwrap_or_else(|| "lib".into());
        let text = fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        // A `use crate::{...}` group may span lines: read each statement whole.
        let mut pending = String::new();
        for (n, line) in code.lines().enumerate() {
            let line = line.trim();
            if line.starts_with("//") {
                continue;
            }
            pending.push_str(line);
            pending.push(' ');
            let open = pending.matches('{').count() > pending.matches('}').count();
            let is_use = pending.trim_start().starts_with("use ") || pending.contains(" use ");
            if is_use && open {
                continue;
            }
            for m in named(&pending, &path) {
                if m != top {
                    out.push((top.clone(), m, format!("src/{}:{}", rel.display(), n + 1)));
                }
            }
            pending.clear();
        }
    }
    out
}

#[test]
fn issue_34_no_module_imports_one_above_it() {
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    let layers = stated_layers(&lib);
    let modules = declared(&lib);
    let unplaced: Vec<&String> = modules
        .iter()
        .filter(|m| !layers.contains_key(*m))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules src/lib.rs's crate doc places in no layer: {unplaced:?}"
    );
    let stale: Vec<&String> = layers.keys().filter(|m| !modules.contains(*m)).collect();
    assert!(
        stale.is_empty(),
        "the crate doc names modules that do not exist: {stale:?}"
    );

    let mut edges: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (from, to, at) in imports() {
        if modules.contains(&to) {
            edges.entry((from, to)).or_default().push(at);
        }
    }
    let mut by_layer: BTreeMap<usize, Vec<&String>> = BTreeMap::new();
    for (m, l) in &layers {
        by_layer.entry(*l).or_default().push(m);
    }
    for (l, ms) in &by_layer {
        let ms: Vec<&str> = ms.iter().map(|m| m.as_str()).collect();
        eprintln!("layer {l}: {}", ms.join(" "));
    }
    let mut upward = Vec::new();
    for ((from, to), at) in &edges {
        let (lf, lt) = (layers[from], layers[to]);
        let verdict = if lt < lf { "UP" } else { "ok" };
        eprintln!(
            "{verdict} {from} ({lf}) -> {to} ({lt}): {} place(s)",
            at.len()
        );
        if lt < lf {
            upward.push(format!(
                "{from} (layer {lf}) imports {to} (layer {lt}) at {}",
                at.join(", ")
            ));
        }
    }
    eprintln!("{} imports checked, {} upward", edges.len(), upward.len());
    assert!(
        upward.is_empty(),
        "imports against the layers:\n{}",
        upward.join("\n")
    );
}

#[test]
fn issue_34_the_layer_check_sees_every_kind_of_path() {
    let path = ["topics".to_string(), "loops".to_string()];
    assert_eq!(named("crate::source::close(&r, t);", &path), ["source"]);
    assert_eq!(
        named("use crate::{progress, trail::X, a::{b, c}};", &path),
        ["progress", "trail", "a"]
    );
    assert_eq!(named("use super::super::report::Y;", &path), ["report"]);
    assert!(named("use super::admin;", &path).is_empty());
}
