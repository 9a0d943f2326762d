//! The test modules; shared helpers are in `common`.

mod call_writer;
mod coding_agent;
mod commands_skills;
mod common;
mod compaction;
mod config_loading;
mod conformance;
mod engine_loop;
mod faults;
mod hooks;
mod layering;
mod mode_reminders;
mod permission_preset;
mod project_trust;
mod session_file;
mod session_titles;
mod step_size;
mod structured;
mod system_prompt;
mod task;
mod turn_deadline;
mod unattended;
