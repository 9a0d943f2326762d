//! `PermissionConfig::from_value` + `from_config_with_home` on arbitrary
//! JSON: never panics, and the rules it builds evaluate the same way
//! through `CompiledRuleset` and `evaluate`.
#![no_main]

use agentgate_permission::{CompiledRuleset, PermissionConfig, evaluate, from_config_with_home};
use libfuzzer_sys::fuzz_target;

const QUERIES: &[(&str, &str)] = &[
    ("bash", "git status"),
    ("bash", "rm -rf /"),
    ("read", "/home/u/.env"),
    ("edit", "src/main.rs"),
    ("external_directory", "/tmp/*"),
    ("webfetch", "https://example.com"),
    ("task", "general"),
    ("", ""),
];

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(config) = PermissionConfig::from_value(&value, "permission") else {
        return;
    };
    let rules = from_config_with_home(&config, "/home/u");
    let compiled = CompiledRuleset::new(&[&rules]);
    for (permission, pattern) in QUERIES {
        let plain = evaluate(permission, pattern, &[&rules]);
        let fast = compiled.evaluate(permission, pattern);
        assert_eq!(
            plain.action, fast.action,
            "{permission} {pattern} on {rules:?}"
        );
    }
});
