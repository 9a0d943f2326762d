//! `agent permission eval`: JSON lines in, JSON lines out — the engine's
//! functions for scripts and cross-language checks.
//!
//! Each input line is one JSON object naming an `op` and its arguments;
//! each line (a blank one too) gets exactly one output line, in input order:
//! `{"result": ...}` on success or `{"error": "line N: ..."}` on failure.
//! When the input object has an `"id"`, the answer repeats it, so answers
//! can be matched to questions whatever the order of the lines.
//!
//! | op | arguments | result |
//! | --- | --- | --- |
//! | `match` | `input`, `pattern` (strings) | boolean |
//! | `evaluate` | `permission`, `pattern`, `rulesets` (list of rule lists) | the deciding rule |
//! | `compiled_evaluate` | same as `evaluate` | the deciding rule, via `CompiledRuleset` |
//! | `from_config` | `config` (opencode `permission` value), optional `home` | list of rules |
//! | `merge` | `rulesets` | list of rules |
//! | `disabled` | `tools` (strings), `ruleset` | sorted list of tool names |
//! | `arity` | `tokens` (strings) | list of tokens |
//! | `subagent_permission` | `parent`, `subagent` (rule lists) | list of rules |
//! | `explain` | `permission`, `pattern`, `layers` (list of `{name, source?, rules}`) | explanation |
//! | `lint` | `layers`, optional `known` (strings; default: built-in permissions) | list of findings |
//! | `bash` | `command`, `directory`, `worktree`, optional `workdir` (strings) | the requests the bash tool would make, without running it |
//!
//! A rule is `{"permission": "bash", "pattern": "git *", "action": "allow"}`.

use std::io::{BufRead, Write};

use agentgate_permission::{
    BUILTIN_PERMISSIONS, CompiledRuleset, Layered, Rule, Ruleset, arity,
    derive_subagent_permission, disabled, evaluate, from_config, from_config_with_home, lint,
    merge, wildcard,
};
use serde_json::{Map, Value};

use super::eval_request::{self, Evaluate, LayerArg, OPS, Request};

/// The help text shown by `agent permission eval --help`.
pub const HELP: &str = r#"Reads JSON lines on stdin and writes one JSON line per input line, in order.

Each line is an object with an "op" and that op's arguments:
  {"op":"match","input":"ls -la","pattern":"ls *"}
  {"op":"evaluate","permission":"bash","pattern":"git push","rulesets":[[{"permission":"bash","pattern":"git *","action":"allow"}]]}
  {"op":"compiled_evaluate", ...same as evaluate, answered by CompiledRuleset}
  {"op":"from_config","config":{"bash":{"*":"ask","git *":"allow"}},"home":"/home/me"}
  {"op":"merge","rulesets":[[...rules...],[...rules...]]}
  {"op":"disabled","tools":["bash","edit","write"],"ruleset":[...rules...]}
  {"op":"arity","tokens":["git","commit","-m","x"]}
  {"op":"subagent_permission","parent":[...rules...],"subagent":[...rules...]}
  {"op":"explain","permission":"bash","pattern":"rm -rf /","layers":[{"name":"defaults","rules":[...]},{"name":"user","source":"opencode.json","rules":[...]}]}
  {"op":"lint","layers":[...as for explain...],"known":["bash","edit"]}
  {"op":"bash","command":"sudo rm -rf /tmp/x","directory":"/home/me/proj","worktree":"/home/me/proj"}

A rule is {"permission":"bash","pattern":"git *","action":"allow"|"deny"|"ask"}.
Answers: {"result": ...} or {"error": "line N: ..."}; an "id" field in the input is
repeated in the answer. Results: match → boolean; evaluate → the deciding rule
({permission, "*", "ask"} when none matches); from_config, merge, subagent_permission
→ list of rules; disabled → sorted list of tool names; arity → list of tokens;
explain → {permission, pattern, action, decided_by, overridden}; lint → list of findings;
bash → list of {permission, patterns, always} the bash tool would ask, in order.
from_config keeps the key order of "config"; "home" defaults to $HOME.
Every line is answered, a blank one with an error. Exit status: 0 when every line succeeded, 1 otherwise."#;

/// Counts of answered lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Lines answered with `{"result": ...}`.
    pub ok: usize,
    /// Lines answered with `{"error": ...}`.
    pub failed: usize,
}

/// Answers every line of `input` on `output` (flushed after each line, so
/// another process can converse line by line). Only I/O errors on
/// `input`/`output` themselves are returned; bad lines are answered.
pub fn run<R: BufRead, W: Write>(mut input: R, mut output: W) -> std::io::Result<Summary> {
    let mut summary = Summary::default();
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        line_no += 1;
        let answer = match std::str::from_utf8(&buf) {
            // Answered too, so that answer N always belongs to line N.
            Ok(text) if text.trim().is_empty() => error_answer(
                line_no,
                None,
                "empty line: expected a JSON object with an \"op\"".to_string(),
            ),
            Ok(text) => answer_line(text, line_no),
            Err(e) => error_answer(line_no, None, format!("not valid UTF-8: {e}")),
        };
        if answer.get("error").is_some() {
            summary.failed += 1;
        } else {
            summary.ok += 1;
        }
        serde_json::to_writer(&mut output, &answer)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(summary)
}

fn error_answer(line_no: usize, id: Option<&Value>, message: String) -> Value {
    let mut out = Map::new();
    if let Some(id) = id {
        out.insert("id".into(), id.clone());
    }
    out.insert(
        "error".into(),
        Value::String(format!("line {line_no}: {message}")),
    );
    Value::Object(out)
}

/// The answer object for one input line (`line_no` is 1-based).
pub fn answer_line(text: &str, line_no: usize) -> Value {
    let request: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => {
            let full = e.to_string();
            let position = format!(" at line {} column {}", e.line(), e.column());
            let message = full.strip_suffix(&position).unwrap_or(&full);
            return error_answer(
                line_no,
                None,
                format!("invalid JSON at column {}: {message}", e.column()),
            );
        }
    };
    let Value::Object(request) = request else {
        return error_answer(
            line_no,
            None,
            "expected a JSON object like {\"op\":\"match\",\"input\":\"ls\",\"pattern\":\"ls *\"}"
                .into(),
        );
    };
    let id = request.get("id").cloned();
    match answer(request) {
        Ok(result) => {
            let mut out = Map::new();
            if let Some(id) = id {
                out.insert("id".into(), id);
            }
            out.insert("result".into(), result);
            Value::Object(out)
        }
        Err(message) => error_answer(line_no, id.as_ref(), message),
    }
}

fn layered(layers: Vec<LayerArg>) -> Layered {
    let mut out = Layered::new();
    for layer in layers {
        out.push(layer.name, layer.source, layer.rules);
    }
    out
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| format!("cannot encode the result: {e}"))
}

/// The op of a request object, checked against [`OPS`] so that a typo is
/// answered with the list of ops.
fn op_of(request: &Map<String, Value>) -> Result<&str, String> {
    let op = match request.get("op") {
        Some(Value::String(op)) => op.as_str(),
        Some(other) => {
            return Err(format!(
                "field \"op\" must be a string (one of {OPS}), found {other}"
            ));
        }
        None => return Err(format!("missing field \"op\" (one of {OPS})")),
    };
    if OPS.split(", ").any(|known| known == op) {
        Ok(op)
    } else {
        Err(format!("unknown op {op:?}: expected one of {OPS}"))
    }
}

fn answer(request: Map<String, Value>) -> Result<Value, String> {
    let op = op_of(&request)?.to_string();
    match eval_request::parse(&op, request)? {
        Request::Match { input, pattern } => Ok(Value::Bool(wildcard::matches(&input, &pattern))),
        Request::Evaluate(Evaluate {
            permission,
            pattern,
            rulesets,
        }) => {
            let refs: Vec<&Ruleset> = rulesets.iter().collect();
            to_json(&evaluate(&permission, &pattern, &refs))
        }
        Request::CompiledEvaluate(Evaluate {
            permission,
            pattern,
            rulesets,
        }) => {
            let refs: Vec<&Ruleset> = rulesets.iter().collect();
            let compiled = CompiledRuleset::new(&refs);
            let rule = match compiled.evaluate(&permission, &pattern).rule {
                Some(rule) => rule.clone(),
                None => Rule::new(permission.as_str(), "*", agentgate_permission::Action::Ask),
            };
            to_json(&rule)
        }
        Request::FromConfig { config, home } => {
            let rules = match home {
                None => from_config(&config),
                Some(home) => from_config_with_home(&config, &home),
            };
            to_json(&rules)
        }
        Request::Merge { rulesets } => to_json(&merge(&rulesets)),
        Request::Disabled { tools, ruleset } => to_json(&disabled(&tools, &ruleset)),
        Request::Arity { tokens } => to_json(&arity::prefix(&tokens)),
        Request::SubagentPermission { parent, subagent } => {
            to_json(&derive_subagent_permission(&parent, &subagent))
        }
        Request::Explain {
            permission,
            pattern,
            layers,
        } => to_json(&layered(layers).explain(&permission, &pattern)),
        Request::Lint { layers, known } => {
            let known: Vec<&str> = match &known {
                Some(known) => known.iter().map(String::as_str).collect(),
                None => BUILTIN_PERMISSIONS.to_vec(),
            };
            to_json(&lint(&layered(layers), &known))
        }
        Request::Bash {
            command,
            directory,
            worktree,
            workdir,
        } => {
            let requests = agentgate_tools::bash_scan::plan_requests(
                &command,
                workdir.as_deref().map(std::path::Path::new),
                std::path::Path::new(&directory),
                std::path::Path::new(&worktree),
            )
            .map_err(|e| format!("bash: {e}"))?;
            let answers: Vec<Value> = requests
                .into_iter()
                .map(|r| {
                    serde_json::json!({
                        "permission": r.permission,
                        "patterns": r.patterns,
                        "always": r.always,
                    })
                })
                .collect();
            Ok(Value::Array(answers))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ask(line: &str) -> Value {
        answer_line(line, 7)
    }

    #[test]
    fn ops() {
        assert_eq!(
            ask(r#"{"op":"match","input":"ls -la","pattern":"ls *"}"#),
            json!({"result": true})
        );
        assert_eq!(
            ask(r#"{"op":"evaluate","permission":"bash","pattern":"x","rulesets":[]}"#),
            json!({"result": {"permission": "bash", "pattern": "*", "action": "ask"}})
        );
        assert_eq!(
            ask(r#"{"op":"arity","tokens":["git","commit","-m","x"],"id":3}"#),
            json!({"id": 3, "result": ["git", "commit"]})
        );
        let r =
            ask(r#"{"op":"from_config","config":{"b":"allow","a":{"~/x":"deny"}},"home":"/h"}"#);
        assert_eq!(
            r,
            json!({"result": [
                {"permission": "b", "pattern": "*", "action": "allow"},
                {"permission": "a", "pattern": "/h/x", "action": "deny"}
            ]})
        );
    }

    #[test]
    fn bash_op_answers_the_tool_requests() {
        let r = ask(
            r#"{"op":"bash","command":"cd /tmp && FOO=1 'rm' -f x","directory":"/p","worktree":"/p"}"#,
        );
        assert_eq!(r["result"][0]["permission"], "external_directory");
        assert_eq!(r["result"][0]["patterns"], json!(["/tmp/*"]));
        assert_eq!(r["result"][1]["permission"], "bash");
        assert!(
            r["result"][1]["patterns"]
                .as_array()
                .unwrap()
                .contains(&json!("rm -f x")),
            "{r}"
        );
        let r = ask(r#"{"op":"bash","command":"ls"}"#);
        assert!(r["error"].as_str().unwrap().contains("directory"), "{r}");
    }

    #[test]
    fn errors_carry_the_line_number() {
        let r = ask("{not json");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .starts_with("line 7: invalid JSON"),
            "{r}"
        );
        let r = ask(r#"{"op":"nope"}"#);
        assert!(
            r["error"].as_str().unwrap().contains("unknown op \"nope\""),
            "{r}"
        );
        let r = ask(
            r#"{"op":"evaluate","permission":"bash","pattern":"x","rulesets":[[{"permission":"bash","pattern":"*","action":"yes"}]]}"#,
        );
        assert!(r["error"].as_str().unwrap().contains("rulesets"), "{r}");
        let r = ask(r#"{"op":"from_config","config":{"bash":{"rm *":1}}}"#);
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains("config.bash[\"rm *\"]"),
            "{r}"
        );
    }

    #[test]
    fn run_answers_every_line_including_blank_ones() {
        let input = "{\"op\":\"match\",\"input\":\"a\",\"pattern\":\"*\"}\n\n[1]\n";
        let mut out = Vec::new();
        let summary = run(input.as_bytes(), &mut out).unwrap();
        assert_eq!(summary, Summary { ok: 1, failed: 2 });
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].contains("line 2: empty line"), "{}", lines[1]);
        assert!(lines[2].contains("line 3"), "{}", lines[2]);
    }
}
