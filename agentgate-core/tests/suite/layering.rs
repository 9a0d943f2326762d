//! The layering of agentgate-core, checked on its sources: the contracts
//! (messages, the model and tool interfaces, usage, errors, events,
//! `AgentSpec`) import nothing from the engine (turn driver, processor,
//! compaction, task tool, agents catalog, sessions), and no module imports
//! itself through others: the import graph has no cycle, of any length,
//! in any folder (the turn driver in `engine/` included).
//!
//! Imports are read from `crate::…` and `super::…` paths in the code
//! (comments and `#[cfg(test)]` modules left out); a path naming a root
//! re-export (`crate::Engine`) counts as an import of the module the item
//! is re-exported from, as `lib.rs` says.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules that form the contracts layer.
const CONTRACTS: &[&str] = &[
    "agent_spec",
    "error",
    "event",
    "ids",
    "message",
    "model",
    "stream",
    "tool",
    "tool_context",
    "tool_registry",
    "usage",
];

/// Modules that form the engine.
const ENGINE: &[&str] = &[
    "agents",
    "commands",
    "compaction",
    "config",
    "engine",
    "prompts",
    "sessions",
    "skills",
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `engine/turn.rs` → `engine::turn`, `engine/mod.rs` → `engine`, `lib.rs` → ``.
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file without comments and without its test module.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests"))
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
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
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
        let head: Vec<String> = path
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let after = &rest[path.len()..];
        if (path.is_empty() || path.ends_with("::"))
            && let Some(group) = after.strip_prefix('{')
        {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let item: Vec<String> = item
                    .trim()
                    .split("::")
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
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

/// The modules each module imports, by file.
fn import_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();

    // Root re-exports: item name → the module it comes from.
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let mut reexports: BTreeMap<String, String> = BTreeMap::new();
    for statement in code_of(&lib).split(';') {
        let Some(at) = statement.find("pub use ") else {
            continue;
        };
        let body = statement[at + "pub use ".len()..].trim();
        let (module, items) = match body.split_once("::") {
            Some((module, items)) => (module.trim(), items),
            None => continue,
        };
        let items = items.trim().trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                reexports.insert(name.to_string(), module.to_string());
            }
        }
    }

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
            continue; // lib.rs lists the API; it imports everything.
        }
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        let mut targets = BTreeSet::new();
        for path in paths_after(&code, "crate::") {
            targets.extend(resolve(&path));
        }
        // `super` of `a::b` (`a/b.rs` or `a/b/mod.rs`) is `a`.
        let own: Vec<String> = module.split("::").map(str::to_string).collect();
        let parent = own[..own.len() - 1].to_vec();
        for path in paths_after(&code, "super::") {
            let full: Vec<String> = parent.iter().cloned().chain(path).collect();
            targets.extend(resolve(&full));
        }
        targets.retain(|t| t != &module && !t.starts_with(&format!("{module}::")));
        graph.insert(module, targets);
    }
    graph
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

#[test]
fn contracts_import_nothing_from_the_engine() {
    let graph = import_graph(&src_dir());
    for module in CONTRACTS {
        assert!(graph.contains_key(*module), "no contracts module {module}");
    }
    let mut violations = Vec::new();
    for (module, targets) in &graph {
        if !CONTRACTS.contains(&top(module)) {
            continue;
        }
        for target in targets {
            if ENGINE.contains(&top(target)) {
                violations.push(format!("{module} imports {target}"));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "contracts import the engine: {violations:#?}"
    );
}

/// The modules `from` reaches through one or more imports.
fn reachable(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
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
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
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
fn closed_path(
    graph: &BTreeMap<String, BTreeSet<String>>,
    start: &str,
    group: &BTreeSet<&str>,
) -> String {
    let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
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
        at = previous[at];
    }
    let path: Vec<&str> = std::iter::once(start)
        .chain(back.into_iter().rev())
        .chain(std::iter::once(start))
        .collect();
    path.join(" -> ")
}

#[test]
fn no_module_imports_itself_through_others() {
    let graph = import_graph(&src_dir());
    let cycles = cycles(&graph);
    assert!(cycles.is_empty(), "import cycles: {cycles:#?}");
}

#[test]
fn the_cycle_check_finds_long_cycles() {
    let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("e", "e")];
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
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
    // The real graph has the edges the engine is known to have.
    let graph = import_graph(&src_dir());
    assert!(graph["engine::turn"].contains("engine::processor"));
    assert!(graph["agents::catalog"].contains("agents::config"));
    assert!(graph["message"].contains("model"));
}

/// The same cycle check over the workspace's other library crates
/// (read from the repository beside this crate; skipped where a crate is
/// not there, as in a published package).
#[test]
fn no_module_imports_itself_through_others_in_the_sibling_crates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut cycles = Vec::new();
    let mut checked = 0;
    for crate_dir in [
        "agentgate-permission",
        "agentgate-providers",
        "agentgate-tools",
    ] {
        let src = root.join(crate_dir).join("src");
        if !src.join("lib.rs").is_file() {
            continue;
        }
        checked += 1;
        let graph = import_graph(&src);
        for cycle in self::cycles(&graph) {
            cycles.push(format!("{crate_dir}: {cycle}"));
        }
    }
    if checked == 0 {
        eprintln!("no sibling crates beside agentgate-core; nothing to check");
    }
    assert!(cycles.is_empty(), "modules import each other: {cycles:#?}");
}
