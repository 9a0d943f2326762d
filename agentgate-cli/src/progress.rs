//! Progress lines on stderr that name what a run waits for when it takes
//! a while: MCP servers starting, a slow tool. (Retries are announced by
//! the renderer as they are scheduled.)

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use agentgate_core::{Event, Part, ToolState, TurnEvent};
use tokio::time::Instant;

use crate::render::input_summary;

/// Runs `work`; when it is still running after `after`, prints the line
/// `describe` gives (what is being waited for) to stderr once.
pub async fn announce_if_slow<T>(
    work: impl Future<Output = T>,
    after: Duration,
    describe: impl FnOnce() -> Option<String>,
) -> T {
    tokio::pin!(work);
    tokio::select! {
        done = &mut work => return done,
        () = tokio::time::sleep(after) => {}
    }
    if let Some(line) = describe() {
        // It names MCP servers and tools: the project's text.
        eprintln!("agent: {}", crate::terminal_text::Untrusted::new(line));
    }
    work.await
}

/// After how long a running tool is named.
pub const SLOW_TOOL: Duration = Duration::from_secs(5);

/// The tools of a turn that are running, to name the ones that take long.
#[derive(Debug, Default)]
pub struct SlowTools {
    running: HashMap<String, Running>,
}

#[derive(Debug)]
struct Running {
    what: String,
    since: Instant,
    announced: bool,
}

impl SlowTools {
    /// Follows the tool parts of `item`.
    pub fn follow(&mut self, item: &TurnEvent) {
        let TurnEvent::Event(Event::PartUpdated {
            part: Part::Tool(tool),
            ..
        }) = item
        else {
            return;
        };
        match &tool.state {
            ToolState::Running { input, .. } => {
                self.running
                    .entry(tool.id.clone())
                    .or_insert_with(|| Running {
                        what: format!("{} {}", tool.tool, input_summary(input))
                            .trim_end()
                            .to_string(),
                        since: Instant::now(),
                        announced: false,
                    });
            }
            state if state.is_finished() => {
                self.running.remove(&tool.id);
            }
            _ => {}
        }
    }

    /// The lines to print now: each tool running longer than [`SLOW_TOOL`],
    /// once.
    pub fn due(&mut self) -> Vec<String> {
        let now = Instant::now();
        let mut lines = Vec::new();
        for tool in self.running.values_mut() {
            let ran = now.duration_since(tool.since);
            if !tool.announced && ran >= SLOW_TOOL {
                tool.announced = true;
                lines.push(format!(
                    "still waiting for {} ({} s so far)",
                    tool.what,
                    ran.as_secs()
                ));
            }
        }
        lines.sort();
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_line_is_printed_only_for_slow_work() {
        let mut described = false;
        let quick = announce_if_slow(async { 1 }, Duration::from_secs(1), || {
            described = true;
            None
        })
        .await;
        assert_eq!(quick, 1);
        assert!(!described, "quick work is not announced");

        let mut described = false;
        let slow = announce_if_slow(
            async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                2
            },
            Duration::from_secs(1),
            || {
                described = true;
                None
            },
        )
        .await;
        assert_eq!(slow, 2);
        assert!(described, "slow work is announced");
    }
}
