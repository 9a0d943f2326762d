//! [`CompiledRuleset`]: a ruleset indexed once, then evaluated without
//! allocating and in time that grows with the length of the request rather
//! than with the number of rules.
//!
//! It answers exactly like [`crate::evaluate()`] (a property test compares
//! them on random rulesets). Rules are indexed by the literal prefix of
//! their wildcards (everything before the first `*` or `?`) in two levels of
//! prefix trees: permission patterns, then, per permission pattern, request
//! patterns. Evaluating walks the request's permission and pattern through
//! the trees once, so only rules whose literal prefix is a prefix of the
//! request are ever tested, highest precedence first, stopping as soon as no
//! remaining candidate can beat the best match found.
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
use crate::wildcard::{self, CASE_INSENSITIVE, fold, literal_prefix};

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

    fn insert(&mut self, key: &str, item: u32) {
        let mut node = 0usize;
        for c in key.chars().map(|c| fold(c, CASE_INSENSITIVE)) {
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
    fn walk(&self, key: &str, mut visit: impl FnMut(&[u32]) -> bool) {
        let mut node = 0usize;
        let mut chars = key.chars();
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
#[derive(Debug, Clone)]
struct Group {
    permission: String,
    /// Highest rule index in the group.
    max_index: u32,
    patterns: Trie,
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
    groups: Vec<Group>,
    permissions: Trie,
}

impl CompiledRuleset {
    /// Compiles the concatenation of `rulesets` (as [`crate::merge`] would).
    pub fn new(rulesets: &[&Ruleset]) -> Self {
        let rules: Vec<Rule> = rulesets.iter().flat_map(|r| r.iter().cloned()).collect();
        let mut groups: Vec<Group> = Vec::new();
        let mut group_of = std::collections::HashMap::<&str, usize>::new();
        for (index, rule) in rules.iter().enumerate() {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            let g = *group_of.entry(rule.permission.as_str()).or_insert_with(|| {
                groups.push(Group {
                    permission: rule.permission.clone(),
                    max_index: 0,
                    patterns: Trie::new(),
                });
                groups.len() - 1
            });
            let group = &mut groups[g];
            group.max_index = group.max_index.max(index);
            group.patterns.insert(literal_prefix(&rule.pattern), index);
        }
        let mut permissions = Trie::new();
        for (g, group) in groups.iter_mut().enumerate() {
            group.patterns.finish();
            permissions.insert(literal_prefix(&group.permission), g as u32);
        }
        permissions.finish();
        // Visit groups with later rules first so the search can stop early.
        for node in &mut permissions.nodes {
            node.items
                .sort_unstable_by_key(|g| std::cmp::Reverse(groups[*g as usize].max_index));
        }
        CompiledRuleset {
            rules,
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
        self.permissions.walk(permission, |groups| {
            for &g in groups {
                let Some(group) = self.groups.get(g as usize) else {
                    continue;
                };
                if best.is_some_and(|b| b >= group.max_index) {
                    // Groups are sorted by max_index: none of the rest can win.
                    break;
                }
                if !wildcard::matches(permission, &group.permission) {
                    continue;
                }
                group.patterns.walk(pattern, |candidates| {
                    for &index in candidates {
                        if best.is_some_and(|b| b >= index) {
                            break;
                        }
                        let matched = self
                            .rules
                            .get(index as usize)
                            .is_some_and(|rule| wildcard::matches(pattern, &rule.pattern));
                        if matched {
                            best = Some(index);
                            break;
                        }
                    }
                    true
                });
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
