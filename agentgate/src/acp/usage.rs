//! What a turn used and cost, in ACP's terms, filled as opencode fills
//! them: after each step a `usage_update` (the context in use against the
//! model's window, and the session's cost so far, from the model's
//! configured prices), and the turn's tokens in the prompt response's
//! `usage`.

use agent_client_protocol::v1::schema::{Cost, SessionUpdate, Usage as AcpUsage, UsageUpdate};

use crate::{Message, ModelCost, Role, Usage};

/// The session's running account: the model's window and prices, and
/// what the session has cost so far.
#[derive(Debug, Clone, Default)]
pub(super) struct UsageMeter {
    /// The model's context window in tokens (0: not known, no update).
    window: u64,
    /// The model's prices (`provider.<id>.models.<model>.cost`), if set.
    price: Option<ModelCost>,
    /// The session's cost in US dollars so far.
    spent: f64,
}

impl UsageMeter {
    /// A meter for a model with `window` tokens of context and `price`,
    /// for a session whose stored transcript is `history`.
    pub(super) fn new(window: u64, price: Option<ModelCost>, history: &[Message]) -> Self {
        let spent = price.map_or(0.0, |price| {
            history
                .iter()
                .filter(|message| message.role == Role::Assistant)
                .map(|message| price.of(&message.usage))
                .sum()
        });
        UsageMeter {
            window,
            price,
            spent,
        }
    }

    /// The update after a step that used `usage`: the context it filled
    /// (input, cache read and cache write, as opencode counts it), the
    /// window, and the session's cost so far when prices are configured.
    /// `None` when the window is not known (opencode sends none then).
    pub(super) fn step(&mut self, usage: &Usage) -> Option<SessionUpdate> {
        if let Some(price) = &self.price {
            self.spent += price.of(usage);
        }
        if self.window == 0 {
            return None;
        }
        let used = usage
            .input
            .saturating_add(usage.cache_read)
            .saturating_add(usage.cache_write);
        let update = UsageUpdate::new(used, self.window)
            .cost(self.price.map(|_| Cost::new(self.spent, "USD")));
        Some(SessionUpdate::UsageUpdate(update))
    }
}

/// The prompt response's `usage`: the turn's tokens, every step's summed;
/// `None` for a turn the model reported no tokens for (it got no answer).
pub(super) fn turn_usage(usage: &Usage) -> Option<AcpUsage> {
    let total = usage
        .input
        .saturating_add(usage.output)
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write);
    if total == 0 {
        return None;
    }
    let some = |n: u64| (n > 0).then_some(n);
    Some(
        AcpUsage::new(total, usage.input, usage.output)
            .thought_tokens(some(usage.reasoning))
            .cached_read_tokens(some(usage.cache_read))
            .cached_write_tokens(some(usage.cache_write)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, cache_read: u64) -> Usage {
        Usage {
            input,
            output,
            cache_read,
            ..Usage::default()
        }
    }

    fn assistant(usage: Usage) -> Message {
        let mut message = Message::new("ses_1", Role::Assistant);
        message.usage = usage;
        message
    }

    #[test]
    fn each_step_reports_the_context_used_and_the_sessions_cost_so_far() {
        let price = ModelCost::new(3.0, 15.0);
        let history = [
            assistant(usage(1_000_000, 0, 0)),
            Message::user("ses_1", "hi"),
        ];
        let mut meter = UsageMeter::new(200_000, Some(price), &history);
        let Some(SessionUpdate::UsageUpdate(update)) = meter.step(&usage(1000, 1_000_000, 500))
        else {
            panic!("an update");
        };
        assert_eq!((update.used, update.size), (1500, 200_000));
        let cost = update.cost.expect("prices are configured");
        assert_eq!(cost.currency, "USD");
        // $3 before this turn, then 1000 in ($0.003), 1M out ($15), 500
        // cache reads (no cache price: $0).
        assert!((cost.amount - 18.003).abs() < 1e-9, "{}", cost.amount);
    }

    #[test]
    fn no_window_no_update_and_no_prices_no_cost() {
        let mut unknown = UsageMeter::new(0, Some(ModelCost::new(1.0, 1.0)), &[]);
        assert!(unknown.step(&usage(10, 10, 0)).is_none());
        let mut unpriced = UsageMeter::new(8192, None, &[]);
        let Some(SessionUpdate::UsageUpdate(update)) = unpriced.step(&usage(10, 10, 0)) else {
            panic!("an update");
        };
        assert!(update.cost.is_none());
    }

    #[test]
    fn the_turns_usage_sums_every_kind_and_is_absent_without_tokens() {
        let mut spent = usage(100, 20, 300);
        spent.reasoning = 5;
        let reported = turn_usage(&spent).expect("tokens were reported");
        assert_eq!(
            (
                reported.total_tokens,
                reported.input_tokens,
                reported.output_tokens
            ),
            (420, 100, 20)
        );
        assert_eq!(reported.thought_tokens, Some(5));
        assert_eq!(reported.cached_read_tokens, Some(300));
        assert_eq!(reported.cached_write_tokens, None);
        assert!(turn_usage(&Usage::default()).is_none());
    }
}
