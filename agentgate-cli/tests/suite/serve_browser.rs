//! The approval page of `agent serve` in a real browser: headless Chromium,
//! driven by playwright-core from tests/serve/browser_approval.mjs, loads
//! the page of a server running against a mock model, sends prompts from
//! the page, sees a command ask and an edit ask (with its diff), rejects
//! the first with the button and the second with feedback, and finds the
//! rejections in the live transcript while neither effect happened.
//! Screenshots are kept in `target/artefacts/serve-browser/`.
//!
//! Runs when `AGENT_PLAYWRIGHT_CORE` names the playwright-core package
//! folder and a Chromium is installed (`.ci/run` installs both: Debian's
//! `chromium`, playwright-core from npm); says so and passes otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::run_cli::{Sandbox, text};

fn chromium() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("AGENT_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

#[tokio::test]
async fn the_approval_page_shows_asks_and_rejects_them_in_a_real_browser() {
    let Ok(playwright) = std::env::var("AGENT_PLAYWRIGHT_CORE") else {
        eprintln!(
            "browser test skipped: AGENT_PLAYWRIGHT_CORE is unset (.ci/run installs playwright-core and Chromium and sets it)"
        );
        return;
    };
    let Some(chromium) = chromium() else {
        eprintln!("browser test skipped: no Chromium (install Debian's chromium package)");
        return;
    };
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/serve/browser_approval.mjs"
    );
    let shots = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/artefacts/serve-browser"
    ));
    let sandbox = Sandbox::new("serve-browser");
    let out = tokio::process::Command::new("node")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .env("PLAYWRIGHT_CORE", &playwright)
        .env("CHROMIUM", &chromium)
        .arg(script)
        .arg("--project")
        .arg(&sandbox.project)
        .arg("--screenshots")
        .arg(&shots)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_agent"))
        .args(["serve", "--port", "0", "--hostname", "127.0.0.1"])
        .current_dir(&sandbox.project)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(240), out)
        .await
        .expect("the browser test did not finish within 240 s")
        .unwrap();
    let stderr = text(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no report ({e}): {}\n{stderr}", text(&out.stdout)));
    let checks = report["checks"].as_array().unwrap();
    let failed: Vec<&Value> = checks.iter().filter(|c| c["ok"] != true).collect();
    assert!(
        failed.is_empty(),
        "failed checks: {failed:#?}\n{report:#}\n{stderr}"
    );
    assert!(out.status.success(), "{report:#}\n{stderr}");
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    for stage in [
        "the ask shows the command",
        "the transcript shows the call rejected",
        "the rejected command did not run",
        "the edit ask shows the diff",
        "the feedback reaches the model and the transcript",
        "the rejected edit did not happen",
        "undo from the page restores the file",
        "restore from the page puts the edit back",
        "no error in the page's console",
    ] {
        assert!(names.contains(&stage), "{stage} missing: {names:?}");
    }
    assert!(shots.join("approval-page-rejected.png").exists());
}
