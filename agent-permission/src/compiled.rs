//! [`CompiledRuleset`]: a ruleset indexed once, then evaluated without
//! allocating and, for rules with a literal prefix or suffix (`git push *`,
//! `src/*`, `*.lock`, literal permission names — nearly all real rules), in
//! time that grows with the length of the request rather than with the
//! number of rules. Patterns with neither (`*`, `*foo*`) cannot be indexed
//! this way: they are tested one by one, latest first, until one matches.
//!
//! It answers exactly like [`crate::evaluate()`] (a property test compares
//! them on random rulesets). Rules are indexed by the literal prefix of
//! their wildcards (everything before the first `*` or `?`) in two levels of
//! prefix trees: permission patterns, then, per permission pattern, request
//! patterns (patterns that start with a wildcard are indexed by their literal
//! suffix instead, in a tree of reversed suffixes). Evaluating walks the
//! request's permission and pattern through the trees once, so only rules
//! whose literal prefix (or suffix) fits the request are ever tested, highest
//! precedence first, stopping as soon as no remaining candidate can beat the
//! best match found. Rules repeated later with the same permission and
//! pattern are indexed once, and each candidate is tested with a
//! pre-analysed [`Pattern`].
//!
//! ```
//! use agent_permission::{Action, CompiledRuleset, Rule, Ruleset};
//! let rules = Ruleset::from(vec![
//!     Rule::new("*", "*", Action::Ask),
//!     Rule::new("bash", "git *", Action::Allow),
//!     Rule::new("bash", "git push *", Action::Deny),
//! ]);
//! let compiled = CompiledRuleset::new(&[&rules]);
//! assert_eq!(compiled.decide("bash", "git status"), Action::Allow);
//! let decision = compiled.evaluate("bash", "git push origin main");
//! assert_eq!((decision.action, decision.index), (Action::Deny, Some(2)));
//! assert_eq!(compiled.decide("edit", "src/lib.rs"), Action::Ask);
//! ```

use crate::rule::{Action, Rule, Ruleset};
use std::collections::HashMap;

use crate::radix::{Direction, RadixTree};
use crate::wildcard::{CASE_INSENSITIVE, Pattern, literal_prefix, literal_suffix};

/// How many candidate groups an evaluation sorts on the stack before it
/// falls back to visiting them in tree order.
const GROUP_BUFFER: usize = 16;

/// The key a literal prefix or suffix is indexed under. Where matching is
/// case-insensitive (Windows) the byte-level index cannot fold case
/// exactly, so nothing is indexed there: every rule is a candidate, tested
/// in precedence order, which is still correct.
fn index_key(literal: &str) -> &str {
    if CASE_INSENSITIVE { "" } else { literal }
}

/// All rules that share one permission pattern.
///
/// Of several rules with the same pattern only the last can ever decide, so
/// only it is indexed. Patterns with a literal prefix are indexed by it in
/// `prefixes`; patterns that start with a wildcard but end with a literal
/// (`*.lock`) are indexed by that suffix, reversed, in `suffixes`; the rest
/// (`*`, `*.env*`) sit at the root of `prefixes` and are always tested.
#[derive(Debug, Clone)]
struct Group {
    permission: Pattern,
    /// Highest rule index in the group.
    max_index: u32,
    prefixes: RadixTree,
    suffixes: RadixTree,
}

/// The outcome of [`CompiledRuleset::evaluate`], borrowing the deciding rule.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision<'a> {
    /// The decided action (`ask` when no rule matched).
    pub action: Action,
    /// The deciding rule, `None` when no rule matched.
    pub rule: Option<&'a Rule>,
    /// Position of the deciding rule in the flattened ruleset.
    pub index: Option<usize>,
}

/// A flattened ruleset indexed for fast, allocation-free evaluation.
#[derive(Debug, Clone)]
pub struct CompiledRuleset {
    rules: Vec<Rule>,
    /// `rules[i].pattern`, analysed for fast matching.
    patterns: Vec<Pattern>,
    groups: Vec<Group>,
    permissions: RadixTree,
}

impl CompiledRuleset {
    /// Compiles the concatenation of `rulesets` (as [`crate::merge`] would).
    pub fn new(rulesets: &[&Ruleset]) -> Self {
        let rules: Vec<Rule> = rulesets.iter().flat_map(|r| r.iter().cloned()).collect();
        let mut groups: Vec<Group> = Vec::new();
        let mut group_of = HashMap::<&str, usize>::new();
        // The last index of every (permission, pattern) pair.
        let mut last = HashMap::<(&str, &str), u32>::new();
        for (index, rule) in rules.iter().enumerate() {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            last.insert((rule.permission.as_str(), rule.pattern.as_str()), index);
        }
        for (index, rule) in rules.iter().enumerate() {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            if last.get(&(rule.permission.as_str(), rule.pattern.as_str())) != Some(&index) {
                continue;
            }
            let g = *group_of.entry(rule.permission.as_str()).or_insert_with(|| {
                groups.push(Group {
                    permission: Pattern::new(&rule.permission),
                    max_index: 0,
                    prefixes: RadixTree::new(Direction::Forward),
                    suffixes: RadixTree::new(Direction::Backward),
                });
                groups.len() - 1
            });
            let group = &mut groups[g];
            group.max_index = group.max_index.max(index);
            let prefix = index_key(literal_prefix(&rule.pattern));
            let suffix = index_key(literal_suffix(&rule.pattern));
            if prefix.is_empty() && !suffix.is_empty() {
                group.suffixes.insert(suffix, index);
            } else {
                group.prefixes.insert(prefix, index);
            }
        }
        let mut permissions = RadixTree::new(Direction::Forward);
        for (g, group) in groups.iter_mut().enumerate() {
            group.prefixes.finish();
            group.suffixes.finish();
            permissions.insert(
                index_key(literal_prefix(group.permission.as_str())),
                g as u32,
            );
        }
        permissions.finish();
        // Visit groups with later rules first so the search can stop early.
        for items in permissions.items_mut() {
            items.sort_unstable_by_key(|g| std::cmp::Reverse(groups[*g as usize].max_index));
        }
        let patterns = rules.iter().map(|r| Pattern::new(&r.pattern)).collect();
        CompiledRuleset {
            rules,
            patterns,
            groups,
            permissions,
        }
    }

    /// Compiles a single ruleset.
    pub fn from_ruleset(ruleset: &Ruleset) -> Self {
        CompiledRuleset::new(&[ruleset])
    }

    /// The flattened rules, in precedence order (last wins).
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The last matching rule for `permission` and `pattern`, exactly as
    /// [`crate::find_last`] over the source rulesets. Never allocates.
    pub fn evaluate(&self, permission: &str, pattern: &str) -> Decision<'_> {
        let mut best: Option<u32> = None;
        // The fast matchers need to know whether an input has backslashes;
        // find out once per evaluation, not once per candidate.
        let permission_backslash = permission.contains('\\');
        let pattern_backslash = pattern.contains('\\');
        // Collect the candidate groups first (on the stack), so they can be
        // tried latest-rule first: a late, specific group then usually
        // settles the answer and the generic early groups (`*`) are skipped.
        let mut found = [0u32; GROUP_BUFFER];
        let mut count = 0usize;
        let mut overflow = false;
        self.permissions
            .walk(permission, permission_backslash, |groups| {
                for &g in groups {
                    match found.get_mut(count) {
                        Some(slot) => {
                            *slot = g;
                            count += 1;
                        }
                        None => overflow = true,
                    }
                }
                !overflow
            });
        let try_group = |g: u32, best: &mut Option<u32>| -> bool {
            let Some(group) = self.groups.get(g as usize) else {
                return true;
            };
            if best.is_some_and(|b| b >= group.max_index) {
                return false;
            }
            if !group
                .permission
                .matches_hinted(permission, permission_backslash)
            {
                return true;
            }
            let mut visit = |candidates: &[u32]| {
                for &index in candidates {
                    if best.is_some_and(|b| b >= index) {
                        break;
                    }
                    let matched = self
                        .patterns
                        .get(index as usize)
                        .is_some_and(|p| p.matches_hinted(pattern, pattern_backslash));
                    if matched {
                        *best = Some(index);
                        break;
                    }
                }
                true
            };
            group.prefixes.walk(pattern, pattern_backslash, &mut visit);
            group.suffixes.walk(pattern, pattern_backslash, &mut visit);
            true
        };
        if overflow {
            // More candidate groups than the buffer holds: visit them in
            // tree order (each node's groups are sorted by `max_index`).
            self.permissions
                .walk(permission, permission_backslash, |groups| {
                    for &g in groups {
                        if !try_group(g, &mut best) {
                            break;
                        }
                    }
                    true
                });
        } else {
            let found = &mut found[..count];
            found.sort_unstable_by_key(|g| {
                std::cmp::Reverse(
                    self.groups
                        .get(*g as usize)
                        .map_or(0, |group| group.max_index),
                )
            });
            for &g in found.iter() {
                if !try_group(g, &mut best) {
                    // Sorted by max_index: no later group can win either.
                    break;
                }
            }
        }
        let index = best.map(|b| b as usize);
        let rule = index.and_then(|i| self.rules.get(i));
        Decision {
            action: rule.map_or(Action::Ask, |r| r.action),
            rule,
            index,
        }
    }

    /// The decided action only. Never allocates.
    pub fn decide(&self, permission: &str, pattern: &str) -> Action {
        self.evaluate(permission, pattern).action
    }
}

impl From<&Ruleset> for CompiledRuleset {
    fn from(ruleset: &Ruleset) -> Self {
        CompiledRuleset::from_ruleset(ruleset)
    }
}
