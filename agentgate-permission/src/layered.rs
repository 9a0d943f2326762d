//! Named layers of rules, and [`Layered::explain`]: which rule decided a
//! request, where it came from, and which earlier rules it overrode.
//!
//! opencode builds an agent's effective ruleset by concatenating several
//! sources (defaults, the agent's own rules, the user's config, the
//! session, "always" approvals). Flattened, the origin of each rule is lost;
//! a [`Layered`] keeps it, so a host can answer "why was this allowed?".
//!
//! ```
//! use agentgate_permission::{Action, Layered, Rule, Ruleset};
//! let mut layers = Layered::new();
//! layers.push("defaults", None, Ruleset::from(vec![Rule::new("*", "*", Action::Allow)]));
//! layers.push("user", Some("opencode.json".into()),
//!     Ruleset::from(vec![Rule::new("bash", "rm *", Action::Deny)]));
//! let why = layers.explain("bash", "rm -rf /");
//! assert_eq!(why.action, Action::Deny);
//! let decided = why.decided_by.as_ref().unwrap();
//! assert_eq!((decided.layer.as_str(), decided.index), ("user", 0));
//! assert_eq!(why.overridden.len(), 1); // the defaults' allow
//! ```

use std::fmt;

use serde::Serialize;

use crate::rule::{Action, Rule, Ruleset};

/// One named source of rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Layer {
    /// What the layer is: `defaults`, `agent:plan`, `user`, `session`, `approved` ...
    pub name: String,
    /// Where its rules came from, e.g. a config file path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The layer's rules, in order.
    pub rules: Ruleset,
}

/// Rulesets stacked in precedence order: later layers override earlier ones,
/// exactly as if they were merged (concatenated).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Layered {
    layers: Vec<Layer>,
}

/// A rule together with where it sits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleRef {
    /// Name of the layer holding the rule.
    pub layer: String,
    /// Source of that layer, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Position of the layer (0 = first, lowest precedence).
    pub layer_index: usize,
    /// Position of the rule inside its layer.
    pub index: usize,
    /// The rule itself.
    pub rule: Rule,
}

impl fmt::Display for RuleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (layer {}", self.rule, self.layer)?;
        if let Some(source) = &self.source {
            write!(f, " from {source}")?;
        }
        write!(f, ", rule #{})", self.index)
    }
}

/// Why a request got its action.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// The requested permission.
    pub permission: String,
    /// The requested pattern.
    pub pattern: String,
    /// The decision (`ask` when no rule matched).
    pub action: Action,
    /// The deciding rule: the last matching one. `None` means no rule
    /// matched and the default `ask` applies.
    pub decided_by: Option<RuleRef>,
    /// Every earlier rule that also matched, in order, and so was overridden.
    pub overridden: Vec<RuleRef>,
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} {:?} → {}",
            self.permission, self.pattern, self.action
        )?;
        match &self.decided_by {
            Some(rule) => writeln!(f, "  decided by {rule}")?,
            None => writeln!(f, "  no rule matches: the default is ask")?,
        }
        for rule in self.overridden.iter().rev() {
            writeln!(f, "  overrides  {rule}")?;
        }
        Ok(())
    }
}

impl Layered {
    /// No layers.
    pub fn new() -> Self {
        Layered::default()
    }

    /// Adds a layer on top (highest precedence so far).
    pub fn push(
        &mut self,
        name: impl Into<String>,
        source: Option<String>,
        rules: Ruleset,
    ) -> &mut Self {
        self.layers.push(Layer {
            name: name.into(),
            source,
            rules,
        });
        self
    }

    /// Builder form of [`Layered::push`] without a source.
    pub fn with(mut self, name: impl Into<String>, rules: Ruleset) -> Self {
        self.push(name, None, rules);
        self
    }

    /// The layers, lowest precedence first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The layers' rulesets, in order, ready for [`crate::evaluate()`].
    pub fn rulesets(&self) -> Vec<&Ruleset> {
        self.layers.iter().map(|layer| &layer.rules).collect()
    }

    /// All rules concatenated, as [`crate::merge`] would.
    pub fn flatten(&self) -> Ruleset {
        self.layers
            .iter()
            .flat_map(|l| l.rules.iter().cloned())
            .collect()
    }

    /// Every rule with its position, lowest precedence first.
    pub fn rule_refs(&self) -> impl Iterator<Item = RuleRef> + '_ {
        self.layers
            .iter()
            .enumerate()
            .flat_map(|(layer_index, layer)| {
                layer
                    .rules
                    .iter()
                    .enumerate()
                    .map(move |(index, rule)| RuleRef {
                        layer: layer.name.clone(),
                        source: layer.source.clone(),
                        layer_index,
                        index,
                        rule: rule.clone(),
                    })
            })
    }

    /// Explains the decision for `permission` and `pattern`: the same action
    /// as [`crate::evaluate()`] over the flattened layers, plus the deciding
    /// rule and the earlier matching rules it overrode.
    pub fn explain(&self, permission: &str, pattern: &str) -> Explanation {
        let mut matching: Vec<RuleRef> = self
            .rule_refs()
            .filter(|r| r.rule.matches(permission, pattern))
            .collect();
        let decided_by = matching.pop();
        Explanation {
            permission: permission.to_string(),
            pattern: pattern.to_string(),
            action: decided_by.as_ref().map_or(Action::Ask, |r| r.rule.action),
            decided_by,
            overridden: matching,
        }
    }
}
