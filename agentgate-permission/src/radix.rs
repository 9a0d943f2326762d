//! A byte-level radix tree (compressed trie) mapping literal keys to lists
//! of item ids, walked along an input from the front (prefixes) or from the
//! back (suffixes). The index behind [`crate::CompiledRuleset`].
//!
//! Edges carry whole byte strings, so walking a request costs one child
//! lookup per branching node plus a `memcmp` per edge, not a lookup per
//! character. Keys are stored with backslashes turned into slashes, as
//! wildcard matching treats them; an input that contains backslashes is
//! compared byte by byte with the same folding (a backslash byte never
//! occurs inside a multi-byte UTF-8 character, so byte folding is exact).

/// Which end of the input the walk starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Keys are prefixes of the input.
    Forward,
    /// Keys are suffixes of the input.
    Backward,
}

#[derive(Debug, Clone, Default)]
struct Node {
    /// The bytes on the edge into this node, in input order.
    label: Box<[u8]>,
    /// Children keyed by the first byte met when walking into them
    /// (a label's first byte forwards, its last byte backwards), sorted.
    children: Vec<(u8, u32)>,
    /// Items whose key ends here, in descending order after `finish`.
    items: Vec<u32>,
    /// Whether `label` holds a `/`, which a `\\` of the input also matches
    /// (set by `finish`).
    slash: bool,
}

/// A radix tree over byte strings.
#[derive(Debug, Clone)]
pub(crate) struct RadixTree {
    nodes: Vec<Node>,
    direction: Direction,
}

#[inline]
fn fold(b: u8) -> u8 {
    if b == b'\\' { b'/' } else { b }
}

impl RadixTree {
    /// An empty tree walked in `direction`.
    pub(crate) fn new(direction: Direction) -> Self {
        RadixTree {
            nodes: vec![Node::default()],
            direction,
        }
    }

    /// The byte a walk meets first in `bytes`.
    #[inline]
    fn lead(&self, bytes: &[u8]) -> Option<u8> {
        match self.direction {
            Direction::Forward => bytes.first().copied(),
            Direction::Backward => bytes.last().copied(),
        }
    }

    /// `bytes` without the `n` bytes a walk meets first.
    #[inline]
    fn strip<'a>(&self, bytes: &'a [u8], n: usize) -> &'a [u8] {
        match self.direction {
            Direction::Forward => bytes.get(n..).unwrap_or_default(),
            Direction::Backward => bytes
                .get(..bytes.len().saturating_sub(n))
                .unwrap_or_default(),
        }
    }

    /// How many bytes `a` and `b` share at the end a walk meets first.
    fn shared(&self, a: &[u8], b: &[u8]) -> usize {
        match self.direction {
            Direction::Forward => a.iter().zip(b).take_while(|(x, y)| x == y).count(),
            Direction::Backward => a
                .iter()
                .rev()
                .zip(b.iter().rev())
                .take_while(|(x, y)| x == y)
                .count(),
        }
    }

    fn child(&self, node: usize, byte: u8) -> Option<(usize, usize)> {
        let children = &self.nodes.get(node)?.children;
        let pos = children.binary_search_by_key(&byte, |(b, _)| *b).ok()?;
        Some((pos, children[pos].1 as usize))
    }

    /// Adds `item` under `key` (backslashes are folded to slashes here).
    pub(crate) fn insert(&mut self, key: &str, item: u32) {
        let key: Vec<u8> = key.bytes().map(fold).collect();
        let mut rest: &[u8] = &key;
        let mut node = 0usize;
        loop {
            let Some(byte) = self.lead(rest) else {
                self.nodes[node].items.push(item);
                return;
            };
            match self.child(node, byte) {
                None => {
                    let id = self.nodes.len() as u32;
                    self.nodes.push(Node {
                        label: rest.into(),
                        children: Vec::new(),
                        items: vec![item],
                        slash: false,
                    });
                    let children = &mut self.nodes[node].children;
                    let pos = children.partition_point(|(b, _)| *b < byte);
                    children.insert(pos, (byte, id));
                    return;
                }
                Some((pos, child)) => {
                    let label = self.nodes[child].label.clone();
                    let common = self.shared(&label, rest);
                    if common < label.len() {
                        // Split the edge: a new node holds the shared part.
                        let (shared, remainder) = match self.direction {
                            Direction::Forward => (&label[..common], &label[common..]),
                            Direction::Backward => (
                                &label[label.len() - common..],
                                &label[..label.len() - common],
                            ),
                        };
                        let remainder_lead = self.lead(remainder).unwrap_or_default();
                        let mid = self.nodes.len() as u32;
                        self.nodes.push(Node {
                            label: shared.into(),
                            children: vec![(remainder_lead, child as u32)],
                            items: Vec::new(),
                            slash: false,
                        });
                        self.nodes[child].label = remainder.into();
                        self.nodes[node].children[pos].1 = mid;
                        node = mid as usize;
                    } else {
                        node = child;
                    }
                    rest = self.strip(rest, common);
                }
            }
        }
    }

    /// Sorts every node's items in descending order and trims memory.
    pub(crate) fn finish(&mut self) {
        for node in &mut self.nodes {
            node.slash = node.label.contains(&b'/');
            node.items.sort_unstable_by(|a, b| b.cmp(a));
            node.items.shrink_to_fit();
            node.children.shrink_to_fit();
        }
    }

    /// Mutable access to every node's item list, for re-ordering.
    pub(crate) fn items_mut(&mut self) -> impl Iterator<Item = &mut Vec<u32>> {
        self.nodes.iter_mut().map(|n| &mut n.items)
    }

    /// Whether the walk can continue from `rest` through the edge into
    /// `node`. A byte comparison settles it unless the label has a slash
    /// and the input a backslash there, which the folded comparison allows.
    #[inline]
    fn edge_matches(&self, node: &Node, rest: &[u8]) -> bool {
        let label = &node.label[..];
        let direct = match self.direction {
            Direction::Forward => rest.starts_with(label),
            Direction::Backward => rest.ends_with(label),
        };
        if direct || !node.slash || rest.len() < label.len() {
            return direct;
        }
        let window = match self.direction {
            Direction::Forward => &rest[..label.len()],
            Direction::Backward => &rest[rest.len() - label.len()..],
        };
        window.iter().zip(label.iter()).all(|(a, b)| fold(*a) == *b)
    }

    /// The items stored under exactly `input` (backslashes in `input` count
    /// as slashes); empty when there are none. Never allocates.
    #[inline]
    pub(crate) fn exact(&self, input: &str) -> &[u32] {
        let mut rest = input.as_bytes();
        let mut node = 0usize;
        loop {
            let Some(current) = self.nodes.get(node) else {
                return &[];
            };
            let Some(byte) = self.lead(rest) else {
                return &current.items;
            };
            let Some((_, child)) = self.child(node, fold(byte)) else {
                return &[];
            };
            let Some(next) = self.nodes.get(child) else {
                return &[];
            };
            if !self.edge_matches(next, rest) {
                return &[];
            }
            rest = self.strip(rest, next.label.len());
            node = child;
        }
    }

    /// Calls `visit` with the items of every node whose key is a prefix
    /// (forwards) or suffix (backwards) of `input` (backslashes in `input`
    /// count as slashes), nearest the root first, until `visit` returns
    /// `false`. Never allocates.
    #[inline]
    pub(crate) fn walk(&self, input: &str, mut visit: impl FnMut(&[u32]) -> bool) {
        let mut rest = input.as_bytes();
        let mut node = 0usize;
        loop {
            let Some(current) = self.nodes.get(node) else {
                return;
            };
            if !current.items.is_empty() && !visit(&current.items) {
                return;
            }
            let Some(byte) = self.lead(rest) else { return };
            let Some((_, child)) = self.child(node, fold(byte)) else {
                return;
            };
            let Some(next) = self.nodes.get(child) else {
                return;
            };
            if !self.edge_matches(next, rest) {
                return;
            }
            rest = self.strip(rest, next.label.len());
            node = child;
        }
    }

    /// Whether no key was inserted.
    pub(crate) fn is_empty(&self) -> bool {
        self.nodes.len() == 1 && self.nodes.first().is_none_or(|n| n.items.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(tree: &RadixTree, input: &str) -> Vec<u32> {
        let mut out = Vec::new();
        tree.walk(input, |items| {
            out.extend_from_slice(items);
            true
        });
        out
    }

    #[test]
    fn forward_finds_every_prefix_key() {
        let mut tree = RadixTree::new(Direction::Forward);
        for (i, key) in ["", "git", "git push", "git pull", "gh", "é", "è", "src/"]
            .iter()
            .enumerate()
        {
            tree.insert(key, i as u32);
        }
        tree.finish();
        assert_eq!(collect(&tree, "git push origin"), [0, 1, 2]);
        assert_eq!(collect(&tree, "git pul"), [0, 1]);
        assert_eq!(collect(&tree, "gh pr"), [0, 4]);
        assert_eq!(collect(&tree, "è"), [0, 6]);
        assert_eq!(collect(&tree, "src\\main.rs"), [0, 7]);
        assert_eq!(collect(&tree, "x"), [0]);
    }

    #[test]
    fn exact_finds_only_whole_keys() {
        let mut tree = RadixTree::new(Direction::Forward);
        for (i, key) in ["bash", "ba", "a/b", ""].iter().enumerate() {
            tree.insert(key, i as u32);
        }
        tree.finish();
        assert_eq!(tree.exact("bash"), [0]);
        assert_eq!(tree.exact("ba"), [1]);
        assert_eq!(tree.exact("a\\b"), [2]);
        assert_eq!(tree.exact(""), [3]);
        assert!(tree.exact("bas").is_empty());
        assert!(tree.exact("bashx").is_empty());
        assert!(tree.exact("b").is_empty());
    }

    #[test]
    fn backward_finds_every_suffix_key() {
        let mut tree = RadixTree::new(Direction::Backward);
        for (i, key) in [".lock", ".rs", "s", "Cargo.lock", "\\x"]
            .iter()
            .enumerate()
        {
            tree.insert(key, i as u32);
        }
        tree.finish();
        assert_eq!(collect(&tree, "a/Cargo.lock"), [0, 3]);
        assert_eq!(collect(&tree, "main.rs"), [2, 1]);
        assert_eq!(collect(&tree, "a/x"), [4]);
        assert_eq!(collect(&tree, "a\\x"), [4]);
        // The backslash far from the start: the window is the input's end.
        assert_eq!(collect(&tree, "abc\\x"), [4]);
        assert_eq!(collect(&tree, "lock"), Vec::<u32>::new());
    }

    /// Edges hold whole shared byte strings: one node per branch point,
    /// not one per byte (the walk's cost depends on it).
    #[test]
    fn edges_are_compressed_in_both_directions() {
        let mut forward = RadixTree::new(Direction::Forward);
        for (i, key) in ["git push", "git pull", "gh"].iter().enumerate() {
            forward.insert(key, i as u32);
        }
        // root, "g", "it pu", "sh", "ll", "h"
        assert_eq!(forward.nodes.len(), 6);
        let mut backward = RadixTree::new(Direction::Backward);
        for (i, key) in ["Cargo.lock", "yarn.lock", ".rs"].iter().enumerate() {
            backward.insert(key, i as u32);
        }
        // root, ".lock", "Cargo", "yarn", ".rs"
        assert_eq!(backward.nodes.len(), 5);
    }

    #[test]
    fn a_tree_is_empty_until_a_key_is_inserted() {
        let mut tree = RadixTree::new(Direction::Backward);
        assert!(tree.is_empty());
        tree.insert("", 0);
        assert!(!tree.is_empty());
        let mut tree = RadixTree::new(Direction::Forward);
        tree.insert("a", 0);
        assert!(!tree.is_empty());
    }
}
