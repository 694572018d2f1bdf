//! Rule 8, the exact search: decides, for one entry, whether any assignment of the gang's
//! tasks satisfies every constraint, when the quick way (tasks placed one after another) did
//! not take them. It mirrors `ReferenceEngine._exact` in `crdkit.placer.reference` step for
//! step, so both find the same assignment and spend the same budget.
//!
//! Each task in turn picks a region (when it has a `required` level of its own below the
//! entry) and then gives every node of the region, in path order, as many pods as still fit,
//! from the most down to none; a slice group must end on whole slices. A dead end undoes the
//! latest choice and tries one pod less there; the first complete assignment wins. Before a
//! task starts, each remaining task must fit alone in its best region and their summed
//! requests must fit in the entry's free capacity. The walk is a loop over an explicit stack,
//! since a region may hold far more nodes than a recursion could go deep.

use std::cmp::Reverse;
use std::collections::HashMap;

use super::{Entry, Placed, Search, Unschedulable};
use crate::capacity::{node_fit, Ask};
use crate::model::{Effect, Mode, Topology, POD};
use crate::state::SCHEDULABLE;

/// The node-level label, left out when nodes are compared for interchangeability.
const HOSTNAME: &str = "kubernetes.io/hostname";

/// A node of the current region: `(node id, slice group, pods it takes now)`.
type RegionNode = (usize, Option<usize>, u64);

/// One choice: node index, pods given, pods still to place and slice-group pods before it,
/// the undo marks, and the later tasks' fits it changed `(ahead index, node, old fit)`.
struct Choice {
    j: usize,
    pods: u64,
    remaining: u64,
    group: u64,
    mark: usize,
    placed: usize,
    changed: Vec<(usize, usize, u64)>,
}

/// A later task's capacity in the whole scope, kept current while an earlier task chooses
/// (forward checking): its fit per node, the pods per slice group, and the total that counts
/// only whole slices.
struct Ahead {
    ask: usize,
    need: u64,
    k: u64,
    /// Node id to `(fit, slice group)`.
    fits: HashMap<usize, (u64, Option<usize>)>,
    groups: HashMap<Option<usize>, u64>,
    capacity: u64,
}

impl Ahead {
    /// True when the task no longer fits even alone.
    fn short(&self) -> bool {
        self.capacity < self.need
    }

    /// Records a node's new fit; returns the old one (to undo with).
    fn set(&mut self, node: usize, fit: u64) -> u64 {
        let Some(entry) = self.fits.get_mut(&node) else {
            return fit;
        };
        let (old, group) = *entry;
        entry.0 = fit;
        let pods = self.groups.entry(group).or_insert(0);
        let before = *pods;
        // `before` counts `old`, so neither subtraction can go below zero.
        let after = before + fit - old;
        *pods = after;
        self.capacity = self.capacity - before / self.k * self.k + after / self.k * self.k;
        old
    }
}

/// One task of the search: its regions, the nodes of the current one with the suffix sums of
/// their fits, and the choices made so far.
struct Frame {
    regions: Vec<Option<usize>>,
    region: usize,
    nodes: Vec<RegionNode>,
    suffix: Vec<u64>,
    choices: Vec<Choice>,
    ahead: Vec<Ahead>,
    /// For each node of the region, the index of its twin when the twin is listed too.
    lead: Vec<Option<usize>>,
}

impl Frame {
    /// True when node `j` is the last of its slice group.
    fn closes(&self, j: usize) -> bool {
        j + 1 == self.nodes.len() || self.nodes[j + 1].1 != self.nodes[j].1
    }

    /// The most pods, at most `top`, node `j` may take: a group must end on whole slices.
    fn most(&self, j: usize, top: u64, group: u64, k: u64) -> Option<u64> {
        if !self.closes(j) || k == 1 {
            return Some(top);
        }
        (0..=top).rev().find(|pods| (group + pods) % k == 0)
    }
}

enum Action {
    Enter,
    Region,
    Descend,
    Back,
    Retreat,
}

/// What one search works over: the entry's nodes in path order, the loose nodes it may use
/// and each task's own region level.
struct Scope {
    walk: Vec<usize>,
    /// Empty unless the entry is the whole cluster.
    loose: Vec<usize>,
    levels: Vec<Option<usize>>,
    /// Node id to the previous node in the walk it is interchangeable with.
    twin: HashMap<usize, usize>,
    tasks: usize,
}

impl Search<'_> {
    /// True (and the pods placed) when some assignment of `asks` inside `within` exists. The
    /// tasks are searched hardest first: larger slices, then more pods, then task order.
    pub(super) fn exact(
        &mut self,
        within: Option<Entry>,
        asks: &[Ask<'_>],
        out: &mut Placed,
    ) -> Result<bool, Unschedulable> {
        let depth = self.depth(within);
        let mut order: Vec<Ask<'_>> = asks.to_vec();
        order.sort_by_key(|a| (Reverse(a.k), Reverse(a.count * a.k), a.index));
        let levels = order
            .iter()
            .map(|a| match a.task.topology {
                Some(Topology {
                    mode: Mode::Required,
                    level: Some(level),
                }) if isize::try_from(level).unwrap_or(isize::MAX) > depth => Some(level),
                _ => None,
            })
            .collect();
        let mut loose: Vec<usize> = if within.is_none() {
            self.state.loose.clone()
        } else {
            Vec::new()
        };
        loose.sort_by(|&a, &b| {
            self.state
                .node(a)
                .spec
                .name
                .cmp(&self.state.node(b).spec.name)
        });
        let walk = self.subtree_nodes(within);
        let scope = Scope {
            twin: self.twins(&walk, &order),
            walk,
            loose,
            levels,
            tasks: order.len(),
        };
        let (mark, placed) = (self.log.len(), out.len());
        if self.solve(&order, &scope, out)? {
            return Ok(true);
        }
        self.undo(mark);
        out.truncate(placed);
        Ok(false)
    }

    /// Each node's previous interchangeable node in the walk: same parent of the node level,
    /// same labels (the hostname label aside, unless a task selects on it), allocatable, usage,
    /// taints and flags. The search gives a twin no more than the one before it (comparing the
    /// tasks' counts in search order), which leaves one of every set of mirror-image
    /// assignments.
    fn twins(&self, walk: &[usize], asks: &[Ask<'_>]) -> HashMap<usize, usize> {
        let host_selected = asks
            .iter()
            .any(|a| a.task.node_selector.iter().any(|(k, _)| k == HOSTNAME));
        let mut last: HashMap<String, usize> = HashMap::new();
        let mut twins = HashMap::new();
        for &n in walk {
            let node = self.state.node(n);
            let spec = &node.spec;
            let mut labels: Vec<(&String, &String)> = spec
                .labels
                .iter()
                .filter(|(k, _)| host_selected || k.as_str() != HOSTNAME)
                .collect();
            labels.sort();
            let nonzero = |values: &[i64]| -> Vec<(usize, i64)> {
                values
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|&(_, v)| v != 0)
                    .collect()
            };
            let place = if self.state.implicit_host {
                node.leaf.and_then(|leaf| self.state.domains[leaf].parent)
            } else {
                node.leaf
            };
            let taints: Vec<(&str, &str, Effect)> = spec
                .taints
                .iter()
                .map(|t| (t.key.as_str(), t.value.as_str(), t.effect))
                .collect();
            // A node some task avoids is no twin of one it does not.
            let avoided: Vec<bool> = asks
                .iter()
                .map(|a| a.avoid.binary_search(&n).is_ok())
                .collect();
            let signature = format!(
                "{place:?}|{labels:?}|{}|{:?}|{:?}|{taints:?}|{}|{}|{avoided:?}",
                node.has_pods,
                nonzero(&node.allocatable),
                nonzero(&node.used),
                spec.unschedulable,
                spec.ready
            );
            if let Some(&previous) = last.get(&signature) {
                twins.insert(n, previous);
            }
            last.insert(signature, n);
        }
        twins
    }

    /// The nodes of the tree inside `within`, in path order.
    fn subtree_nodes(&self, within: Option<Entry>) -> Vec<usize> {
        let mut stack: Vec<usize> = match within {
            None => self.state.roots.iter().rev().copied().collect(),
            Some(Entry::Domain(d)) => vec![d],
            Some(Entry::Node(n) | Entry::Loose(n)) => return vec![n],
        };
        let mut walk = Vec::new();
        while let Some(d) = stack.pop() {
            let domain = &self.state.domains[d];
            walk.extend(domain.nodes.iter().copied());
            stack.extend(domain.children.iter().rev());
        }
        walk
    }

    /// The domain at `depth` above a node of the tree.
    fn ancestor(&self, node: usize, depth: usize) -> Option<usize> {
        let mut at = self.state.node(node).leaf;
        while let Some(d) = at {
            if self.state.domains[d].depth <= depth {
                return (self.state.domains[d].depth == depth).then_some(d);
            }
            at = self.state.domains[d].parent;
        }
        None
    }

    /// A task's regions: the entry itself, or every domain of its own `required` level inside
    /// the entry, in path order.
    fn regions(&self, level: Option<usize>, scope: &Scope) -> Vec<Option<usize>> {
        let Some(level) = level else {
            return vec![None];
        };
        let mut found: Vec<Option<usize>> = Vec::new();
        for &n in &scope.walk {
            let domain = self.ancestor(n, level);
            if domain.is_some() && found.last() != Some(&domain) {
                found.push(domain);
            }
        }
        found
    }

    /// The nodes of a region that take a pod of `ask` now, with their slice groups.
    fn region_nodes(&self, region: Option<usize>, ask: &Ask<'_>, scope: &Scope) -> Vec<RegionNode> {
        let mut nodes = Vec::new();
        for &n in &scope.walk {
            if let Some(d) = region {
                let depth = self.state.domains[d].depth;
                if self.ancestor(n, depth) != Some(d) {
                    continue;
                }
            }
            let fit = node_fit(self.state, n, ask);
            if fit > 0 {
                let group = if ask.k > 1 {
                    self.ancestor(n, ask.s)
                } else {
                    None
                };
                nodes.push((n, group, fit));
            }
        }
        if region.is_none() && ask.loose_ok {
            for &n in &scope.loose {
                let fit = node_fit(self.state, n, ask);
                if fit > 0 {
                    nodes.push((n, None, fit));
                }
            }
        }
        nodes
    }

    /// Forward checking for the tasks after `t` that may use the whole scope; `held` has each
    /// task's nodes from `t` on, as [`Self::bounds_hold`] found them.
    fn ahead(t: usize, asks: &[Ask<'_>], scope: &Scope, held: Vec<Vec<RegionNode>>) -> Vec<Ahead> {
        let mut ahead = Vec::new();
        for ((u, ask), nodes) in asks
            .iter()
            .enumerate()
            .skip(t + 1)
            .zip(held.into_iter().skip(1))
        {
            if scope.levels[u].is_some() {
                continue;
            }
            let mut groups: HashMap<Option<usize>, u64> = HashMap::new();
            for &(_, group, fit) in &nodes {
                *groups.entry(group).or_insert(0) += fit;
            }
            ahead.push(Ahead {
                ask: u,
                need: ask.count * ask.k,
                k: ask.k,
                fits: nodes
                    .iter()
                    .map(|&(n, group, fit)| (n, (fit, group)))
                    .collect(),
                groups,
                capacity: Self::pods_capacity(&nodes, ask.k),
            });
        }
        ahead
    }

    /// How many pods the nodes take, counting only whole slices of each slice group.
    fn pods_capacity(nodes: &[RegionNode], k: u64) -> u64 {
        let mut total = 0;
        let mut at = 0;
        while at < nodes.len() {
            let group = nodes[at].1;
            let mut pods = 0;
            while at < nodes.len() && nodes[at].1 == group {
                pods += nodes[at].2;
                at += 1;
            }
            total += pods / k * k;
        }
        total
    }

    /// Necessary conditions for the tasks from `t` on: each fits alone in its best region, and
    /// their summed requests fit in the free capacity of the entry. When they hold, each task's
    /// nodes in the whole scope (for forward checking); `None` when they do not.
    fn bounds_hold(
        &self,
        t: usize,
        asks: &[Ask<'_>],
        scope: &Scope,
    ) -> Option<Vec<Vec<RegionNode>>> {
        let mut held = Vec::with_capacity(asks.len() - t);
        for (ask, &level) in asks[t..].iter().zip(&scope.levels[t..]) {
            let nodes = self.region_nodes(None, ask, scope);
            let best = match level {
                None => Self::pods_capacity(&nodes, ask.k),
                Some(level) => {
                    let mut best = 0;
                    let mut at = 0;
                    while at < nodes.len() {
                        let (start, region) = (at, self.ancestor(nodes[at].0, level));
                        while at < nodes.len() && self.ancestor(nodes[at].0, level) == region {
                            at += 1;
                        }
                        best = best.max(Self::pods_capacity(&nodes[start..at], ask.k));
                    }
                    best
                }
            };
            if best < ask.count * ask.k {
                return None;
            }
            held.push(nodes);
        }
        let loose: &[usize] = if asks[t..].iter().any(|a| a.loose_ok) {
            &scope.loose
        } else {
            &[]
        };
        let considered: Vec<usize> = scope
            .walk
            .iter()
            .chain(loose)
            .copied()
            .filter(|&n| self.state.flags[n] & SCHEDULABLE != 0)
            .collect();
        let mut need: Vec<(usize, i128)> = Vec::new();
        for ask in &asks[t..] {
            let pods = i128::from(ask.count * ask.k);
            for &(r, milli) in ask.requests {
                match need.iter_mut().find(|(have, _)| *have == r) {
                    Some(entry) => entry.1 += i128::from(milli) * pods,
                    None => need.push((r, i128::from(milli) * pods)),
                }
            }
        }
        if considered.iter().all(|&n| self.state.node(n).has_pods) {
            let pods: u64 = asks[t..].iter().map(|a| a.count * a.k).sum();
            need.push((0, i128::from(POD) * i128::from(pods)));
        }
        let fits = need.iter().all(|&(r, amount)| {
            let free: i128 = considered
                .iter()
                .map(|&n| i128::from(self.state.free_columns[r][n].max(0)))
                .sum();
            amount <= free
        });
        fits.then_some(held)
    }

    /// The walk itself (see the module docs).
    fn solve(
        &mut self,
        asks: &[Ask<'_>],
        scope: &Scope,
        out: &mut Placed,
    ) -> Result<bool, Unschedulable> {
        let mut frames: Vec<Frame> = Vec::new();
        // given[node * tasks + t]: pods of task `t` (search order) given to the node so far.
        let mut given = vec![0u64; self.state.nodes.len() * scope.tasks];
        let mut cursor: (usize, u64, u64) = (0, 0, 0);
        let mut action = Action::Enter;
        loop {
            match action {
                Action::Enter => {
                    let t = frames.len();
                    if t == asks.len() {
                        return Ok(true);
                    }
                    let Some(held) = self.bounds_hold(t, asks, scope) else {
                        action = Action::Retreat;
                        continue;
                    };
                    frames.push(Frame {
                        regions: self.regions(scope.levels[t], scope),
                        region: usize::MAX,
                        nodes: Vec::new(),
                        suffix: Vec::new(),
                        choices: Vec::new(),
                        ahead: Self::ahead(t, asks, scope, held),
                        lead: Vec::new(),
                    });
                    action = Action::Region;
                }
                Action::Region => {
                    let t = frames.len() - 1;
                    let ask = &asks[t];
                    let next = frames[t].region.wrapping_add(1);
                    if next == frames[t].regions.len() {
                        frames.pop();
                        action = Action::Retreat;
                        continue;
                    }
                    let nodes = self.region_nodes(frames[t].regions[next], ask, scope);
                    let mut suffix = vec![0; nodes.len() + 1];
                    for j in (0..nodes.len()).rev() {
                        suffix[j] = suffix[j + 1] + nodes[j].2;
                    }
                    let listed: HashMap<usize, usize> =
                        nodes.iter().enumerate().map(|(j, n)| (n.0, j)).collect();
                    let lead = nodes
                        .iter()
                        .map(|n| {
                            scope
                                .twin
                                .get(&n.0)
                                .and_then(|twin| listed.get(twin).copied())
                        })
                        .collect();
                    let frame = &mut frames[t];
                    frame.region = next;
                    frame.nodes = nodes;
                    frame.suffix = suffix;
                    frame.lead = lead;
                    cursor = (0, ask.count * ask.k, 0);
                    action = Action::Descend;
                }
                Action::Descend => {
                    self.steps += 1;
                    let budget = self.state.search_budget;
                    if self.steps > budget {
                        return Err(Unschedulable {
                            reason: format!(
                                "search budget exhausted: {budget} steps found neither a \
                                 placement nor a proof that none exists"
                            ),
                            fit: None,
                        });
                    }
                    let t = frames.len() - 1;
                    let ask = &asks[t];
                    let (j, remaining, group) = cursor;
                    if frames[t].ahead.iter().any(Ahead::short) {
                        action = Action::Back;
                        continue;
                    }
                    if remaining == 0 {
                        action = if group % ask.k == 0 {
                            Action::Enter
                        } else {
                            Action::Back
                        };
                        continue;
                    }
                    let frame = &frames[t];
                    if j == frame.nodes.len() || frame.suffix[j] < remaining {
                        action = Action::Back;
                        continue;
                    }
                    let mut top = frame.nodes[j].2.min(remaining);
                    if let Some(lead) = frame.lead[j] {
                        let (mine, theirs) = (
                            frame.nodes[j].0 * scope.tasks,
                            frame.nodes[lead].0 * scope.tasks,
                        );
                        if given[mine..mine + t] == given[theirs..theirs + t] {
                            top = top.min(given[theirs + t]);
                        }
                    }
                    match frame.most(j, top, group, ask.k) {
                        None => action = Action::Back,
                        Some(pods) => {
                            given[frames[t].nodes[j].0 * scope.tasks + t] = pods;
                            cursor = self.choose(
                                &mut frames[t],
                                asks,
                                ask,
                                out,
                                j,
                                pods,
                                remaining,
                                group,
                            );
                        }
                    }
                }
                Action::Back => {
                    let t = frames.len() - 1;
                    let ask = &asks[t];
                    let Some(choice) = frames[t].choices.pop() else {
                        action = Action::Region;
                        continue;
                    };
                    given[frames[t].nodes[choice.j].0 * scope.tasks + t] = 0;
                    self.undo(choice.mark);
                    out.truncate(choice.placed);
                    for &(index, node, fit) in choice.changed.iter().rev() {
                        frames[t].ahead[index].set(node, fit);
                    }
                    if choice.pods == 0 {
                        continue;
                    }
                    if let Some(less) =
                        frames[t].most(choice.j, choice.pods - 1, choice.group, ask.k)
                    {
                        given[frames[t].nodes[choice.j].0 * scope.tasks + t] = less;
                        cursor = self.choose(
                            &mut frames[t],
                            asks,
                            ask,
                            out,
                            choice.j,
                            less,
                            choice.remaining,
                            choice.group,
                        );
                        action = Action::Descend;
                    }
                }
                Action::Retreat => {
                    if frames.is_empty() {
                        return Ok(false);
                    }
                    action = Action::Back;
                }
            }
        }
    }

    /// Gives node `j` of the frame `pods` pods of the task; returns the cursor for the next node.
    #[allow(clippy::too_many_arguments)]
    fn choose(
        &mut self,
        frame: &mut Frame,
        asks: &[Ask<'_>],
        ask: &Ask<'_>,
        out: &mut Placed,
        j: usize,
        pods: u64,
        remaining: u64,
        group: u64,
    ) -> (usize, u64, u64) {
        let (mark, placed) = (self.log.len(), out.len());
        let node = frame.nodes[j].0;
        let mut changed = Vec::new();
        if pods > 0 {
            self.assign(node, ask, pods, out);
            for (index, later) in frame.ahead.iter_mut().enumerate() {
                if later.fits.contains_key(&node) {
                    let fit = node_fit(self.state, node, &asks[later.ask]);
                    changed.push((index, node, later.set(node, fit)));
                }
            }
        }
        frame.choices.push(Choice {
            j,
            pods,
            remaining,
            group,
            mark,
            placed,
            changed,
        });
        let held = if frame.closes(j) { 0 } else { group + pods };
        (j + 1, remaining - pods, held)
    }
}
