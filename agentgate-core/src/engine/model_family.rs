//! Which file-changing tools a model is offered, by model family: GPT and
//! codex-family models are trained on the `apply_patch` envelope, so they
//! see `apply_patch` instead of `edit` and `write`; every other model sees
//! `edit` and `write` and not `apply_patch` (opencode's registry rule).

use crate::model::ToolSpec;

/// The patch tool's id.
const APPLY_PATCH: &str = "apply_patch";
/// The tools it replaces.
const REPLACED: [&str; 2] = ["edit", "write"];

/// Whether `model_id` is offered `apply_patch` instead of `edit` and
/// `write`: its id names a GPT model (`gpt-`) other than the open-weight
/// `gpt-oss` models and the GPT-4 generation.
pub(super) fn uses_apply_patch(model_id: &str) -> bool {
    model_id.contains("gpt-") && !model_id.contains("oss") && !model_id.contains("gpt-4")
}

/// Drops from `specs` the file tools `model_id`'s family is not offered.
/// When no `apply_patch` is registered (or visible), `edit` and `write`
/// stay for every model, so a host without it never loses its edit tools.
pub(super) fn retain_for_model(specs: &mut Vec<ToolSpec>, model_id: &str) {
    let patch = uses_apply_patch(model_id);
    let has_patch = specs.iter().any(|spec| spec.name == APPLY_PATCH);
    specs.retain(|spec| {
        if spec.name == APPLY_PATCH {
            patch
        } else if REPLACED.contains(&spec.name.as_str()) {
            !(patch && has_patch)
        } else {
            true
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt_and_codex_models_use_apply_patch() {
        for (id, expected) in [
            ("gpt-5", true),
            ("gpt-5-codex", true),
            ("gpt-5.1-codex-mini", true),
            ("openai/gpt-5", true),
            ("gpt-4.1", false),
            ("gpt-4o", false),
            ("gpt-oss-120b", false),
            ("claude-sonnet-4-5", false),
            ("o3", false),
        ] {
            assert_eq!(uses_apply_patch(id), expected, "{id}");
        }
    }

    fn names(specs: &[ToolSpec]) -> Vec<&str> {
        specs.iter().map(|spec| spec.name.as_str()).collect()
    }

    fn specs(names: &[&str]) -> Vec<ToolSpec> {
        names
            .iter()
            .map(|name| ToolSpec {
                name: name.to_string(),
                description: String::new(),
                parameters: std::sync::Arc::new(serde_json::json!({})),
            })
            .collect()
    }

    #[test]
    fn the_family_chooses_between_apply_patch_and_edit_write() {
        let all = ["read", "edit", "write", "apply_patch", "bash"];
        let mut gpt = specs(&all);
        retain_for_model(&mut gpt, "gpt-5-codex");
        assert_eq!(names(&gpt), ["read", "apply_patch", "bash"]);
        let mut claude = specs(&all);
        retain_for_model(&mut claude, "claude-sonnet-4-5");
        assert_eq!(names(&claude), ["read", "edit", "write", "bash"]);
        let mut without = specs(&["read", "edit", "write"]);
        retain_for_model(&mut without, "gpt-5");
        assert_eq!(names(&without), ["read", "edit", "write"]);
    }
}
