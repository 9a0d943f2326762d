//! Skills (opencode's `SKILL.md` files): instructions a model loads on
//! demand with the `skill` tool (in agentgate-tools), listed in the system
//! prompt, their folders readable without an ask.
//!
//! Files: `catalog.rs` (discovery and [`Skills`]), `section.rs` (the
//! system prompt's section and which skills an agent may load).
//!
//! ```
//! use agentgate_core::skills::{Skills, skills_section};
//! use agentgate_core::permission::Ruleset;
//!
//! let dir = std::env::temp_dir().join(format!("skills-doc-{}", std::process::id()));
//! std::fs::create_dir_all(dir.join("release")).unwrap();
//! std::fs::write(
//!     dir.join("release/SKILL.md"),
//!     "---\nname: release\ndescription: Cut a release\n---\nBump the version, then tag.\n",
//! ).unwrap();
//! let mut skills = Skills::new();
//! let mut warnings = Vec::new();
//! skills.load_folder(&dir, &mut warnings);
//! assert!(warnings.is_empty());
//! assert_eq!(skills.get("release").unwrap().content.trim(), "Bump the version, then tag.");
//! let section = skills_section(&skills, &Ruleset::default()).unwrap();
//! assert!(section.contains("<name>release</name>"));
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

mod catalog;
mod section;

pub use catalog::{CONFIG_SKILL_DIRS, EXTERNAL_SKILL_DIRS, SKILL_FILE, Skill, Skills};
pub use section::{SKILL, available_skills, skills_section};
