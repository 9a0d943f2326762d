//! `docs/providers.md` lists every provider of the one table
//! (`agentgate_providers::PROVIDERS`), with its key variables.

#![allow(clippy::expect_used)]

#[test]
fn provider_guide_names_every_provider_and_key() {
    let path = format!("{}/../docs/providers.md", env!("CARGO_MANIFEST_DIR"));
    let guide = std::fs::read_to_string(&path).expect("docs/providers.md");
    for provider in agentgate_providers::PROVIDERS {
        assert!(
            guide.contains(&format!("`{}/", provider.id)),
            "{path} does not list provider {:?}",
            provider.id
        );
        for variable in provider.key_env {
            assert!(
                guide.contains(variable),
                "{path} does not name {variable} for {}",
                provider.id
            );
        }
    }
}

#[test]
fn provider_guide_lists_every_model_family() {
    let path = format!("{}/../docs/providers.md", env!("CARGO_MANIFEST_DIR"));
    let guide = std::fs::read_to_string(&path).expect("docs/providers.md");
    for family in agentgate_providers::MODEL_FAMILIES {
        assert!(
            guide.contains(&format!("| {} |", family.name)),
            "{path} has no family row for {:?}",
            family.name
        );
    }
}
