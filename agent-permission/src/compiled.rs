//! [`CompiledRuleset`]: a ruleset indexed once, then evaluated without
//! allocating and in time that grows with the length of the request rather
//! than with the number of rules.
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

use crate::wildcard::{CASE_INSENSITIVE, Pattern, fold, literal_prefix, literal_suffix};

/// A prefix tree from (folded) characters to lists of item ids.
#[derive(Debug, Clone, Default)]
struct Trie {
    nodes: Vec<Node>,
}

#[derive(Debug, Clone, Default)]
struct Node {
    /// Children sorted by character, for binary search.
    children: Vec<(char, u32)>,
    /// Items whose key ends here, in descending order.
    items: Vec<u32>,
}

impl Trie {
    fn new() -> Self {
        Trie {
            nodes: vec![Node::default()],
        }
    }

    fn insert(&mut self, key: impl Iterator<Item = char>, item: u32) {
        let mut node = 0usize;
        for c in key.map(|c| fold(c, CASE_INSENSITIVE)) {
            let next = match self.nodes[node]
                .children
                .binary_search_by_key(&c, |(k, _)| *k)
            {
                Ok(pos) => self.nodes[node].children[pos].1 as usize,
                Err(pos) => {
                    let id = self.nodes.len();
                    self.nodes.push(Node::default());
                    self.nodes[node].children.insert(pos, (c, id as u32));
                    id
                }
            };
            node = next;
        }
        self.nodes[node].items.push(item);
    }

    fn finish(&mut self) {
        for node in &mut self.nodes {
            node.items.sort_unstable_by(|a, b| b.cmp(a));
            node.items.shrink_to_fit();
            node.children.shrink_to_fit();
        }
    }

    fn child(&self, node: usize, c: char) -> Option<usize> {
        let children = &self.nodes.get(node)?.children;
        children
            .binary_search_by_key(&c, |(k, _)| *k)
            .ok()
            .map(|pos| children[pos].1 as usize)
    }

    /// Calls `visit` with the items of every node on the path spelled by
    /// `key`, root first, until `visit` returns `false` or the path ends.
    #[inline]
    fn walk(&self, mut chars: impl Iterator<Item = char>, mut visit: impl FnMut(&[u32]) -> bool) {
        let mut node = 0usize;
        loop {
            let Some(current) = self.nodes.get(node) else {
                return;
            };
            if !current.items.is_empty() && !visit(&current.items) {
                return;
            }
            let Some(c) = chars.next() else { return };
            match self.child(node, fold(c, CASE_INSENSITIVE)) {
                Some(next) => node = next,
                None => return,
            }
        }
    }
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
    prefixes: Trie,
    suffixes: Trie,
}

/// The outcome of [`CompiledRuleset::evaluate`], borrowing the deciding rule.
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
    permissions: Trie,
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
                    prefixes: Trie::new(),
                    suffixes: Trie::new(),
                });
                groups.len() - 1
            });
            let group = &mut groups[g];
            group.max_index = group.max_index.max(index);
            let prefix = literal_prefix(&rule.pattern);
            let suffix = literal_suffix(&rule.pattern);
            if prefix.is_empty() && !suffix.is_empty() {
                group.suffixes.insert(suffix.chars().rev(), index);
            } else {
                group.prefixes.insert(prefix.chars(), index);
            }
        }
        let mut permissions = Trie::new();
        for (g, group) in groups.iter_mut().enumerate() {
            group.prefixes.finish();
            group.suffixes.finish();
            permissions.insert(literal_prefix(group.permission.as_str()).chars(), g as u32);
        }
        permissions.finish();
        // Visit groups with later rules first so the search can stop early.
        for node in &mut permissions.nodes {
            node.items
                .sort_unstable_by_key(|g| std::cmp::Reverse(groups[*g as usize].max_index));
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
        self.permissions.walk(permission.chars(), |groups| {
            for &g in groups {
                let Some(group) = self.groups.get(g as usize) else {
                    continue;
                };
                if best.is_some_and(|b| b >= group.max_index) {
                    // Groups are sorted by max_index: none of the rest can win.
                    break;
                }
                if !group
                    .permission
                    .matches_hinted(permission, permission_backslash)
                {
                    continue;
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
                            best = Some(index);
                            break;
                        }
                    }
                    true
                };
                group.prefixes.walk(pattern.chars(), &mut visit);
                group.suffixes.walk(pattern.chars().rev(), &mut visit);
            }
            true
        });
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
