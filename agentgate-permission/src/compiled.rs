//! [`CompiledRuleset`]: a ruleset indexed once, then evaluated without
//! allocating and, for rules with a literal prefix or suffix (`git push *`,
//! `src/*`, `*.lock`, literal permission names — nearly all real rules), in
//! time that grows with the length of the request rather than with the
//! number of rules. Patterns with neither (`*`, `*foo*`) cannot be indexed
//! this way: they are tested one by one, latest first, until one matches.
//!
//! It answers exactly like [`crate::evaluate()`] (a property test compares
//! them on random rulesets). Request patterns are indexed by their literal
//! prefix (everything before the first `*` or `?`) in a prefix tree, or, when
//! they start with a wildcard, by their literal suffix in a tree of reversed
//! suffixes. Every permission name that a rule spells out (`bash`, `edit`)
//! gets its own pair of trees holding every rule that applies to it (its
//! own, and those of `*`, `b?sh` ...): a request for it costs one exact
//! lookup and two walks. Requests for other permissions go through groups,
//! one per wildcard permission pattern (`*`, `mcp_*`), found by a walk of
//! the permission's literal prefix (or, for a few groups, tested one by
//! one). Only rules whose literal prefix (or suffix) fits the request are
//! ever tested, highest precedence first, stopping as soon as no remaining
//! candidate can beat the best match found. Of rules repeated later with the
//! same pattern only the last is indexed, and each candidate is tested with
//! a pre-analysed [`Pattern`] (most are one comparison: equal, starts with,
//! ends with).
//!
//! ```
//! use agentgate_permission::{Action, CompiledRuleset, Rule, Ruleset};
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
use crate::wildcard::{
    self, CASE_INSENSITIVE, Pattern, is_literal, literal_prefix, literal_suffix,
};

/// How many candidate groups an evaluation sorts on the stack before it
/// falls back to visiting them in tree order.
const GROUP_BUFFER: usize = 16;

/// Up to this many groups, a permission without a view tests every group in
/// `group_order` instead of walking the permission tree.
const LINEAR_GROUPS: usize = 8;

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

/// Every rule that can decide for one literal permission name (`bash`),
/// whatever its own permission pattern (`bash`, `b?sh`, `*`), indexed by
/// request pattern like a [`Group`]. Of several such rules with the same
/// request pattern only the last is kept.
#[derive(Debug, Clone)]
struct View {
    prefixes: RadixTree,
    suffixes: RadixTree,
}

/// A flattened ruleset indexed for fast, allocation-free evaluation.
#[derive(Debug, Clone)]
pub struct CompiledRuleset {
    rules: Vec<Rule>,
    /// `rules[i].pattern`, analysed for fast matching.
    patterns: Vec<Pattern>,
    /// The literal permission names of the rules (`bash`, `edit`), each
    /// mapped to its [`View`]: a request for one of them is answered by
    /// one exact lookup and two walks of that view.
    names: RadixTree,
    views: Vec<View>,
    /// The groups of the other permission patterns (`*`, `mcp_*`), for
    /// requests whose permission no rule names literally (all groups where
    /// matching ignores case, since views are not built there).
    groups: Vec<Group>,
    permissions: RadixTree,
    /// Every group, by descending `max_index`.
    group_order: Vec<u32>,
}

impl CompiledRuleset {
    /// Compiles the concatenation of `rulesets` (as [`crate::merge`] would).
    pub fn new(rulesets: &[&Ruleset]) -> Self {
        let rules: Vec<Rule> = rulesets.iter().flat_map(|r| r.iter().cloned()).collect();
        let kept = deciding_rules(&rules);
        let use_views = !CASE_INSENSITIVE;
        let (names, views) = if use_views {
            literal_views(&rules, &kept)
        } else {
            let mut names = RadixTree::new(Direction::Forward);
            names.finish();
            (names, Vec::new())
        };
        let (groups, permissions, group_order) = pattern_groups(&rules, &kept, use_views);
        let patterns = rules.iter().map(|r| Pattern::new(&r.pattern)).collect();
        CompiledRuleset {
            rules,
            patterns,
            names,
            views,
            groups,
            permissions,
            group_order,
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
        let best = match self.names.exact(permission).first() {
            Some(&view) => self
                .views
                .get(view as usize)
                .and_then(|view| self.best_in(&view.prefixes, &view.suffixes, pattern)),
            None => self.best_in_groups(permission, pattern),
        };
        let index = best.map(|b| b as usize);
        let rule = index.and_then(|i| self.rules.get(i));
        Decision {
            action: rule.map_or(Action::Ask, |r| r.action),
            rule,
            index,
        }
    }

    /// Raises `best` to the highest index among the rules indexed in
    /// `prefixes` and `suffixes` whose request pattern matches `pattern`.
    /// `backslash` caches whether `pattern` has a backslash, once known.
    #[inline]
    fn search(
        &self,
        prefixes: &RadixTree,
        suffixes: &RadixTree,
        pattern: &str,
        best: &mut Option<u32>,
        backslash: &mut Option<bool>,
    ) {
        let mut visit = |candidates: &[u32]| {
            // Candidates are in descending order: the first match is the
            // best of this node, and none below `best` can win.
            for &index in candidates {
                if best.is_some_and(|b| b >= index) {
                    break;
                }
                let matched = self
                    .patterns
                    .get(index as usize)
                    .is_some_and(|p| p.matches_lazy(pattern, backslash));
                if matched {
                    *best = Some(index);
                    break;
                }
            }
            true
        };
        prefixes.walk(pattern, &mut visit);
        if !suffixes.is_empty() {
            suffixes.walk(pattern, &mut visit);
        }
    }

    /// The best rule for a permission that has a view.
    #[inline]
    fn best_in(&self, prefixes: &RadixTree, suffixes: &RadixTree, pattern: &str) -> Option<u32> {
        let mut best = None;
        self.search(prefixes, suffixes, pattern, &mut best, &mut None);
        best
    }

    /// The best rule for a permission no rule names literally: through the
    /// groups of wildcard permission patterns.
    fn best_in_groups(&self, permission: &str, pattern: &str) -> Option<u32> {
        let mut best: Option<u32> = None;
        let mut permission_backslash = None;
        let mut pattern_backslash = None;
        // Tries group `g`; `false` when neither it nor any group with a
        // lower `max_index` can beat `best`.
        let mut try_group = |g: u32, best: &mut Option<u32>| -> bool {
            let Some(group) = self.groups.get(g as usize) else {
                return true;
            };
            if best.is_some_and(|b| b >= group.max_index) {
                return false;
            }
            if group
                .permission
                .matches_lazy(permission, &mut permission_backslash)
            {
                self.search(
                    &group.prefixes,
                    &group.suffixes,
                    pattern,
                    best,
                    &mut pattern_backslash,
                );
            }
            true
        };
        if self.groups.len() <= LINEAR_GROUPS {
            // Few groups: test them all, latest rule first, without a walk.
            for &g in &self.group_order {
                if !try_group(g, &mut best) {
                    break;
                }
            }
            return best;
        }
        // Collect the candidate groups first (on the stack), so they can be
        // tried latest-rule first: a late, specific group then usually
        // settles the answer and the generic early groups (`*`) are skipped.
        let mut found = [0u32; GROUP_BUFFER];
        let Some(count) = self.candidate_groups(permission, &mut found) else {
            // More candidate groups than the buffer holds: visit them in
            // tree order (each node's groups are sorted by `max_index`).
            self.permissions.walk(permission, |groups| {
                for &g in groups {
                    if !try_group(g, &mut best) {
                        break;
                    }
                }
                true
            });
            return best;
        };
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
        best
    }

    /// Puts the groups whose permission prefix leads to `permission` into
    /// `found` and says how many; `None` when there are more than it holds.
    fn candidate_groups(&self, permission: &str, found: &mut [u32; GROUP_BUFFER]) -> Option<usize> {
        let mut count = 0usize;
        let mut overflow = false;
        self.permissions.walk(permission, |groups| {
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
        (!overflow).then_some(count)
    }

    /// The decided action only. Never allocates.
    pub fn decide(&self, permission: &str, pattern: &str) -> Action {
        self.evaluate(permission, pattern).action
    }
}

/// The indexes of the rules that can decide: the last of every
/// (permission, pattern) pair, in order.
fn deciding_rules(rules: &[Rule]) -> Vec<u32> {
    let mut last = HashMap::<(&str, &str), u32>::new();
    for (index, rule) in rules.iter().enumerate() {
        let index = u32::try_from(index).unwrap_or(u32::MAX);
        last.insert((rule.permission.as_str(), rule.pattern.as_str()), index);
    }
    rules
        .iter()
        .enumerate()
        .filter_map(|(index, rule)| {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            let key = (rule.permission.as_str(), rule.pattern.as_str());
            (last.get(&key) == Some(&index)).then_some(index)
        })
        .collect()
}

/// The views: one per literal permission name (backslashes folded), each
/// indexing the last rule per request pattern among those whose
/// permission pattern matches that name; and the tree of the names.
fn literal_views(rules: &[Rule], kept: &[u32]) -> (RadixTree, Vec<View>) {
    let rule_at = |index: u32| rules.get(index as usize);
    let mut names = RadixTree::new(Direction::Forward);
    let mut views = Vec::new();
    let mut seen_names = HashMap::<String, ()>::new();
    for rule in kept.iter().filter_map(|&i| rule_at(i)) {
        if !is_literal(&rule.permission) {
            continue;
        }
        let name = rule.permission.replace('\\', "/");
        if seen_names.insert(name.clone(), ()).is_some() {
            continue;
        }
        let mut by_pattern = HashMap::<&str, u32>::new();
        for &index in kept {
            if let Some(r) = rule_at(index)
                && wildcard::matches(&name, &r.permission)
            {
                let slot = by_pattern.entry(r.pattern.as_str()).or_insert(index);
                *slot = (*slot).max(index);
            }
        }
        let mut view = View {
            prefixes: RadixTree::new(Direction::Forward),
            suffixes: RadixTree::new(Direction::Backward),
        };
        for (pattern, index) in by_pattern {
            index_pattern(&mut view.prefixes, &mut view.suffixes, pattern, index);
        }
        view.prefixes.finish();
        view.suffixes.finish();
        names.insert(&name, views.len() as u32);
        views.push(view);
    }
    names.finish();
    (names, views)
}

/// The groups: one per permission pattern the views do not cover (every
/// one when `use_views` is off); the tree from each group's literal prefix
/// to it; and every group by descending `max_index`, so a search visits
/// later rules first and can stop early.
fn pattern_groups(
    rules: &[Rule],
    kept: &[u32],
    use_views: bool,
) -> (Vec<Group>, RadixTree, Vec<u32>) {
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of = HashMap::<&str, usize>::new();
    for rule_index in kept.iter().copied() {
        let Some(rule) = rules.get(rule_index as usize) else {
            continue;
        };
        if use_views && is_literal(&rule.permission) {
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
        group.max_index = group.max_index.max(rule_index);
        index_pattern(
            &mut group.prefixes,
            &mut group.suffixes,
            &rule.pattern,
            rule_index,
        );
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
    for items in permissions.items_mut() {
        items.sort_unstable_by_key(|g| std::cmp::Reverse(groups[*g as usize].max_index));
    }
    let mut group_order: Vec<u32> = (0..groups.len() as u32).collect();
    group_order.sort_unstable_by_key(|g| std::cmp::Reverse(groups[*g as usize].max_index));
    (groups, permissions, group_order)
}

/// Indexes `pattern` (rule `index`) by its literal prefix in `prefixes`, or
/// by its literal suffix in `suffixes` when it starts with a wildcard; a
/// pattern with neither sits at the root of `prefixes` and is always tested.
fn index_pattern(prefixes: &mut RadixTree, suffixes: &mut RadixTree, pattern: &str, index: u32) {
    let prefix = index_key(literal_prefix(pattern));
    let suffix = index_key(literal_suffix(pattern));
    if prefix.is_empty() && !suffix.is_empty() {
        suffixes.insert(suffix, index);
    } else {
        prefixes.insert(prefix, index);
    }
}

impl From<&Ruleset> for CompiledRuleset {
    fn from(ruleset: &Ruleset) -> Self {
        CompiledRuleset::from_ruleset(ruleset)
    }
}
