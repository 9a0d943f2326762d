//! The import graph of a crate's modules, read from its sources, and the
//! cycles in it: the layering tests of every crate of the workspace
//! (`tests/layering.rs` of this crate walks them all; agentgate-core also
//! checks that its contracts import nothing from its engine).
//!
//! Imports are read from `crate::…` and `super::…` paths in the code
//! (comments and inline `#[cfg(test)] mod tests` left out); a path naming a
//! root re-export (`crate::Engine`) counts as an import of the module the
//! item is re-exported from, as `lib.rs` (or `main.rs`) says.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io;
use std::path::{Path, PathBuf};

/// Module path (`engine::turn`) → the modules it imports.
pub type ImportGraph = BTreeMap<String, BTreeSet<String>>;

/// Every `.rs` file under `dir`, sorted, depth first.
pub fn rust_sources(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    collect_sources(dir, &mut out)?;
    Ok(out)
}

/// Adds the `.rs` files under `dir` to `out`, sorted within each folder.
fn collect_sources(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        entries.push(entry?.path());
    }
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_sources(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// `engine/turn.rs` → `engine::turn`, `engine/mod.rs` → `engine`,
/// `lib.rs` and `main.rs` → ``.
pub fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let is_root = parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main");
    if is_root || parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file without comments and without its inline test module.
pub fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests {"))
        {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Every path that follows `prefix` (`crate::` or `super::`) in `code`,
/// braces expanded one level (`crate::{a::B, c}` → `a::B`, `c`).
pub fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().last();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let head = segments(&path);
        let after = &rest[path.len()..];
        if (path.is_empty() || path.ends_with("::"))
            && let Some(group) = after.strip_prefix('{')
        {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let item = segments(item);
                if !item.is_empty() {
                    out.push(head.iter().cloned().chain(item).collect());
                }
            }
            continue;
        }
        if !head.is_empty() {
            out.push(head);
        }
    }
    out
}

/// `a :: b::` → `["a", "b"]`.
fn segments(path: &str) -> Vec<String> {
    path.trim()
        .split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The root's re-exports (`pub use engine::{Engine, Turn};`): item name →
/// the module it comes from.
fn root_reexports(root_code: &str) -> BTreeMap<String, String> {
    let mut reexports = BTreeMap::new();
    for statement in root_code.split(';') {
        let Some(at) = statement.find("pub use ") else {
            continue;
        };
        let body = statement[at + "pub use ".len()..].trim();
        let Some((module, items)) = body.split_once("::") else {
            continue;
        };
        let items = items.trim().trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                reexports.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    reexports
}

/// The modules each module of the crate whose sources are in `src`
/// imports (the root, `lib.rs` or `main.rs`, lists the API and is left
/// out).
pub fn import_graph(src: &Path) -> io::Result<ImportGraph> {
    let files = rust_sources(src)?;
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|name| src.join(name))
        .find(|path| path.is_file())
        .ok_or_else(|| io::Error::other(format!("no lib.rs or main.rs in {}", src.display())))?;
    let reexports = root_reexports(&code_of(&std::fs::read_to_string(root)?));
    let resolve = |segments: &[String]| -> Option<String> {
        for len in (1..=segments.len()).rev() {
            let candidate = segments[..len].join("::");
            if modules.contains(&candidate) {
                return Some(candidate);
            }
        }
        segments
            .first()
            .and_then(|name| reexports.get(name))
            .cloned()
    };

    let mut graph = BTreeMap::new();
    for file in &files {
        let module = module_of(src, file);
        if module.is_empty() {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(file)?);
        let mut targets = BTreeSet::new();
        for path in paths_after(&code, "crate::") {
            targets.extend(resolve(&path));
        }
        // `super` of `a::b` (`a/b.rs` or `a/b/mod.rs`) is `a`.
        let own: Vec<String> = module.split("::").map(str::to_string).collect();
        let parent = &own[..own.len() - 1];
        for path in paths_after(&code, "super::") {
            let full: Vec<String> = parent.iter().cloned().chain(path).collect();
            targets.extend(resolve(&full));
        }
        targets.retain(|t| t != &module && !t.starts_with(&format!("{module}::")));
        graph.insert(module, targets);
    }
    Ok(graph)
}

/// The modules `from` reaches through one or more imports.
pub fn reachable(graph: &ImportGraph, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<&str> = graph
        .get(from)
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    while let Some(module) = stack.pop() {
        if seen.insert(module.to_string()) {
            stack.extend(graph.get(module).into_iter().flatten().map(String::as_str));
        }
    }
    seen
}

/// Every cycle of the graph, as its modules (a strongly connected group of
/// two or more, or one that imports itself), each as
/// `a -> b -> … -> a` along one closed path, so a failure names the edges
/// to cut.
pub fn cycles(graph: &ImportGraph) -> Vec<String> {
    let reach: BTreeMap<&str, BTreeSet<String>> = graph
        .keys()
        .map(|module| (module.as_str(), reachable(graph, module)))
        .collect();
    let mut reported = BTreeSet::new();
    let mut out = Vec::new();
    for (module, reached) in &reach {
        if !reached.contains(*module) || reported.contains(*module) {
            continue;
        }
        let group: BTreeSet<&str> = reached
            .iter()
            .map(String::as_str)
            .filter(|other| reach.get(other).is_some_and(|back| back.contains(*module)))
            .collect();
        reported.extend(group.iter().map(|m| m.to_string()));
        out.push(closed_path(graph, module, &group));
    }
    out
}

/// One path from `start` back to itself inside `group` (breadth first, so
/// the shortest), written `a -> b -> a`.
fn closed_path(graph: &ImportGraph, start: &str, group: &BTreeSet<&str>) -> String {
    let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    let mut last = start;
    'search: while let Some(module) = queue.pop_front() {
        for next in graph.get(module).into_iter().flatten() {
            let next = next.as_str();
            if next == start {
                last = module;
                break 'search;
            }
            if group.contains(next) && !previous.contains_key(next) {
                previous.insert(next, module);
                queue.push_back(next);
            }
        }
    }
    let mut back = Vec::new();
    let mut at = last;
    while at != start {
        back.push(at);
        match previous.get(at) {
            Some(before) => at = before,
            None => break,
        }
    }
    let path: Vec<&str> = std::iter::once(start)
        .chain(back.into_iter().rev())
        .chain(std::iter::once(start))
        .collect();
    path.join(" -> ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_check_finds_long_cycles() {
        let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("e", "e")];
        let mut graph = ImportGraph::new();
        for (from, to) in edges {
            graph.entry(from.into()).or_default().insert(to.into());
            graph.entry(to.into()).or_default();
        }
        assert_eq!(cycles(&graph), ["a -> b -> c -> a", "e -> e"]);
    }

    #[test]
    fn the_checker_sees_imports() {
        let code = code_of(
            "use crate::{engine::Turn, message};\n// use crate::hidden;\nfn f() { crate::model::X; }\n#[cfg(test)]\nmod tests { use crate::sessions; }\n",
        );
        let paths = paths_after(&code, "crate::");
        let joined: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
        assert_eq!(joined, ["engine::Turn", "message", "model::X"]);
    }

    #[test]
    fn modules_are_named_from_their_files() {
        let src = Path::new("/x/src");
        let name = |file: &str| module_of(src, &src.join(file));
        assert_eq!(name("lib.rs"), "");
        assert_eq!(name("main.rs"), "");
        assert_eq!(name("engine/mod.rs"), "engine");
        assert_eq!(name("engine/turn.rs"), "engine::turn");
        assert_eq!(name("bin/main.rs"), "bin::main");
    }

    #[test]
    fn root_reexports_name_their_modules() {
        let found = root_reexports("pub use engine::{Engine, turn::Turn};\npub use ids::Id;");
        assert_eq!(found.get("Engine").map(String::as_str), Some("engine"));
        assert_eq!(found.get("Turn").map(String::as_str), Some("engine"));
        assert_eq!(found.get("Id").map(String::as_str), Some("ids"));
    }
}
