//! The skills section of the system prompt (§15 item 5): the skills an
//! agent may load, listed with their descriptions and files. Left out when
//! the agent's rules disable the `skill` tool, as opencode leaves it out;
//! a skill a rule denies to the agent is not listed.

use agentgate_permission::{Action, Ruleset, evaluate, is_disabled};

use super::catalog::{Skill, Skills};

/// The `skill` permission (and tool) name.
pub const SKILL: &str = "skill";

/// The skills an agent with `permission` may load (not denied by a rule),
/// sorted by name.
pub fn available_skills<'a>(skills: &'a Skills, permission: &Ruleset) -> Vec<&'a Skill> {
    let mut list: Vec<&Skill> = skills
        .iter()
        .filter(|skill| evaluate(SKILL, &skill.name, &[permission]).action != Action::Deny)
        .collect();
    list.sort_by(|a, b| a.name.cmp(&b.name));
    list
}

/// The section for an agent with `permission`: `None` when its rules
/// disable the `skill` tool or it may load no skill.
///
/// ```
/// use agentgate_core::skills::{Skills, skills_section};
/// use agentgate_core::permission::Ruleset;
/// assert_eq!(skills_section(&Skills::new(), &Ruleset::default()), None);
/// ```
pub fn skills_section(skills: &Skills, permission: &Ruleset) -> Option<String> {
    if is_disabled(SKILL, permission) {
        return None;
    }
    let list = available_skills(skills, permission);
    if list.is_empty() {
        return None;
    }
    let mut text = String::from(
        "Skills give specialized instructions and workflows for particular tasks. \
         When a task matches a skill's description, load the skill with the skill tool \
         before starting.\n<available_skills>\n",
    );
    for skill in list {
        text.push_str(&format!(
            "  <skill>\n    <name>{}</name>\n    <description>{}</description>\n    <location>{}</location>\n  </skill>\n",
            escape(&skill.name),
            escape(&skill.description),
            escape(&skill.location.display().to_string()),
        ));
    }
    text.push_str("</available_skills>");
    Some(text)
}

/// Escapes text for the XML-like listing.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
