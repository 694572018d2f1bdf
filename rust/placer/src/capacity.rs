//! How many pods (and slices) of one task every node and domain can take right now.
//!
//! A node's fit is the minimum over requested resources of `free / request` (and of free `pods`
//! when the node has that resource), zero when a filter refuses the node. A domain's unit capacity
//! is `pods / k` at or below the slice depth `s` and the sum of its children's above it, so it
//! never grows going down the tree; the search relies on that to walk only fitting domains.
//! Whole domains are skipped when their aggregates show that no node in them takes one pod.

use std::sync::Arc;

pub(crate) use crate::fit_cache::Capacities;
use crate::model::{Effect, Policy, TaskSpec, POD, UNLIMITED};
use crate::state::{ClusterState, Domain, Node, SCHEDULABLE, TAINTED};

/// One task to place now: `count` units of `k` pods, each unit inside one depth-`s` domain.
#[derive(Debug, Clone)]
pub(crate) struct Ask<'a> {
    pub(crate) index: usize,
    pub(crate) task: &'a TaskSpec,
    /// Interned positive requests, `pods` left out, then the per-node limits the task's pods
    /// each take one pod's worth of (see `ClusterState::per_node_limits`).
    pub(crate) requests: &'a [(usize, i64)],
    /// How many of `requests` are the task's own: the policies rank by those only.
    pub(crate) ranked: usize,
    /// Ids of the nodes the task avoids, sorted.
    pub(crate) avoid: &'a [usize],
    pub(crate) count: u64,
    pub(crate) k: u64,
    pub(crate) s: usize,
    pub(crate) loose_ok: bool,
    pub(crate) policy: Policy,
}

impl Ask<'_> {
    /// The task's own requests, without the per-node limits.
    pub(crate) fn ranked(&self) -> &[(usize, i64)] {
        &self.requests[..self.ranked]
    }

    /// The same pods as plain pods, once the search is at or below the slice depth.
    pub(crate) fn plain(&self) -> Self {
        Self {
            count: self.count * self.k,
            k: 1,
            ..self.clone()
        }
    }

    pub(crate) fn unit_word(&self) -> &'static str {
        if self.k > 1 {
            "slices"
        } else {
            "pods"
        }
    }

    /// `what` of this task's units in a reason: "12 of 16 worker pods", or "4 of 5 pods"
    /// when the task is itself named after the unit (a one-task gang's "pods").
    pub(crate) fn units_of(&self, what: &str) -> String {
        self.named(what, self.unit_word())
    }

    /// This task's whole ask in a list: "1 master pod", "15 worker pods".
    pub(crate) fn counted(&self) -> String {
        let word = self.unit_word();
        let unit = if self.count == 1 {
            &word[..word.len() - 1]
        } else {
            word
        };
        self.named(&self.count.to_string(), unit)
    }

    /// `what`, the task's name unless it is the unit's own ("pods"), and `unit`.
    fn named(&self, what: &str, unit: &str) -> String {
        let name = &self.task.name;
        if name.is_empty() || name == self.unit_word() {
            format!("{what} {unit}")
        } else {
            format!("{what} {name} {unit}")
        }
    }
}

/// `sum over resources of 10^6 * free / allocatable`, skipping resources with no allocatable.
fn free_share(sums: &[(i128, i128)]) -> i64 {
    let total: i128 = sums
        .iter()
        .filter(|(_, a)| *a > 0)
        .map(|(f, a)| 1_000_000 * f / a)
        .sum();
    i64::try_from(total).unwrap_or(i64::MAX)
}

/// Per requested resource, `(max(free, 0), allocatable)` of a schedulable node, zeros otherwise.
fn node_sums(node: &Node, ask: &Ask<'_>) -> Vec<(i128, i128)> {
    ask.ranked()
        .iter()
        .map(|&(r, _)| {
            if node.schedulable() {
                (
                    i128::from(node.free(r).max(0)),
                    i128::from(node.allocatable.get(r).copied().unwrap_or(0)),
                )
            } else {
                (0, 0)
            }
        })
        .collect()
}

/// Volcano's binpack score with every weight 1: the mean of `10^6 * (used + request) /
/// allocatable` over the requested resources the node has. Higher is better.
fn binpack_score(node: &Node, ask: &Ask<'_>) -> i64 {
    let terms: Vec<i128> = ask
        .ranked()
        .iter()
        .filter_map(|&(r, milli)| {
            let allocatable = i128::from(node.allocatable.get(r).copied().unwrap_or(0));
            let used = i128::from(node.used.get(r).copied().unwrap_or(0));
            (allocatable > 0).then(|| 1_000_000 * (used + i128::from(milli)) / allocatable)
        })
        .collect();
    let count = i128::try_from(terms.len()).unwrap_or(1);
    if count == 0 {
        return 0;
    }
    i64::try_from(terms.iter().sum::<i128>() / count).unwrap_or(i64::MAX)
}

/// Whether none of the resources the task requests is in use on the node (keep-whole's "free").
fn node_free(node: &Node, ask: &Ask<'_>) -> bool {
    ask.ranked()
        .iter()
        .all(|&(r, _)| node.used.get(r).copied().unwrap_or(0) == 0)
}

/// The policy rank of a node: less is better. For keep-whole, whether it is free (1) or not
/// (0): the search adds the free domains above it (see `visit`).
fn node_rank(node: &Node, ask: &Ask<'_>) -> i64 {
    match ask.policy {
        Policy::BestFit => 0,
        Policy::LeastFree => free_share(&node_sums(node, ask)),
        Policy::Binpack => -binpack_score(node, ask),
        Policy::KeepWhole => i64::from(node_free(node, ask)),
    }
}

/// Whether a policy reads every node of a domain (no pruning of hopeless domains).
fn reads_every_node(policy: Policy) -> bool {
    matches!(policy, Policy::LeastFree | Policy::KeepWhole)
}

fn tolerated(task: &TaskSpec, taint: &crate::model::Taint) -> bool {
    task.tolerations.iter().any(|t| t.tolerates(taint))
}

/// How many pods of the task node `id` takes. Reads the compact columns; the node record is
/// touched only when the task has a node selector or the node has taints.
pub(crate) fn node_fit(state: &ClusterState, id: usize, ask: &Ask<'_>) -> u64 {
    let flags = state.flags[id];
    if flags & SCHEDULABLE == 0 || ask.avoid.binary_search(&id).is_ok() {
        return 0;
    }
    if !ask.task.node_selector.is_empty() || flags & TAINTED != 0 {
        let node = state.node(id);
        let labels = &node.spec.labels;
        if ask
            .task
            .node_selector
            .iter()
            .any(|(k, v)| labels.get(k) != Some(v))
        {
            return 0;
        }
        let repelled = |t: &crate::model::Taint| {
            t.effect != Effect::PreferNoSchedule && !tolerated(ask.task, t)
        };
        if node.spec.taints.iter().any(repelled) {
            return 0;
        }
    }
    let mut fit = UNLIMITED;
    for &(r, milli) in ask.requests {
        let free = u64::try_from(state.free_columns[r][id].max(0)).unwrap_or(0);
        fit = fit.min(free / milli.unsigned_abs());
    }
    // A node without the `pods` resource has NO_LIMIT free of it, far above UNLIMITED pods.
    let free = u64::try_from(state.free_columns[0][id].max(0)).unwrap_or(0);
    fit.min(free / POD.unsigned_abs())
}

/// 1 when the node has a `PreferNoSchedule` taint the task does not tolerate.
pub(crate) fn node_penalty(state: &ClusterState, id: usize, task: &TaskSpec) -> u8 {
    if state.flags[id] & TAINTED == 0 {
        return 0;
    }
    let taints = &state.node(id).spec.taints;
    u8::from(
        taints
            .iter()
            .any(|t| t.effect == Effect::PreferNoSchedule && !tolerated(task, t)),
    )
}

/// True when the aggregates prove that no node of the domain takes one pod of the task.
fn pruned(domain: &Domain, ask: &Ask<'_>) -> bool {
    if domain.ready_count == 0 {
        return true;
    }
    let too_small =
        |r: usize, need: i64| domain.max_free(r) < need || domain.sum_free(r) < i128::from(need);
    ask.requests.iter().any(|&(r, milli)| too_small(r, milli)) || too_small(0, POD)
}

impl Capacities {
    /// Zeroed capacities; the rank arrays exist only for the policies that use them.
    fn empty(state: &ClusterState, policy: Policy) -> Self {
        Self {
            pods: vec![0; state.domains.len()],
            units: vec![0; state.domains.len()],
            fit: vec![0; state.nodes.len()],
            penalty: vec![0; state.nodes.len()],
            loose: Vec::new(),
            domain_rank: if reads_every_node(policy) {
                vec![0; state.domains.len()]
            } else {
                Vec::new()
            },
            node_rank: if policy == Policy::BestFit {
                Vec::new()
            } else {
                vec![0; state.nodes.len()]
            },
        }
    }

    /// Capacities over the whole cluster; `prune` lets the aggregates skip hopeless domains.
    pub(crate) fn of_cluster(state: &ClusterState, ask: &Ask<'_>, prune: bool) -> Self {
        let mut caps = Self::empty(state, ask.policy);
        // The least-free share and the freedom of a domain count every node in it, so nothing
        // may be skipped.
        let prune = prune && !reads_every_node(ask.policy);
        let mut sums = vec![(0, 0); ask.ranked().len()];
        for &root in &state.roots {
            caps.visit(state, root, ask, prune, &mut sums);
            caps.add_free_above(state, root, 0, ask.policy);
        }
        if ask.loose_ok {
            for &id in &state.loose {
                caps.fit[id] = node_fit(state, id, ask);
                caps.penalty[id] = node_penalty(state, id, ask.task);
                if ask.policy != Policy::BestFit {
                    caps.node_rank[id] = node_rank(state.node(id), ask);
                }
                caps.loose.push((id, caps.fit[id]));
            }
        }
        caps
    }

    /// Capacities inside one domain only.
    pub(crate) fn of_domain(state: &ClusterState, domain: usize, ask: &Ask<'_>) -> Self {
        let mut caps = Self::empty(state, ask.policy);
        let mut sums = vec![(0, 0); ask.ranked().len()];
        caps.visit(state, domain, ask, !reads_every_node(ask.policy), &mut sums);
        // Free domains above `domain` would add the same to every entry inside it: left out.
        caps.add_free_above(state, domain, 0, ask.policy);
        caps
    }

    /// Capacity of one node only.
    pub(crate) fn of_node(state: &ClusterState, node: usize, ask: &Ask<'_>) -> Self {
        let mut caps = Self::empty(state, ask.policy);
        caps.fit[node] = node_fit(state, node, ask);
        caps.penalty[node] = node_penalty(state, node, ask.task);
        if ask.policy != Policy::BestFit {
            caps.node_rank[node] = node_rank(state.node(node), ask);
        }
        caps
    }

    /// Fills the capacities of domain `id` and below; adds its least-free sums to `parent_sums`.
    fn visit(
        &mut self,
        state: &ClusterState,
        id: usize,
        ask: &Ask<'_>,
        prune: bool,
        parent_sums: &mut [(i128, i128)],
    ) -> (u64, u64) {
        let domain = &state.domains[id];
        // Leaf domains are not pruned: checking their aggregates costs as much as fitting their
        // nodes, and on large clusters those extra reads miss the cache.
        let leaf = domain.children.is_empty();
        if domain.node_count == 0 || (prune && !leaf && pruned(domain, ask)) {
            self.pods[id] = 0;
            self.units[id] = 0;
            if ask.policy == Policy::KeepWhole {
                self.domain_rank[id] = 1; // no nodes: nothing to break (keep-whole never prunes)
            }
            return (0, 0);
        }
        let least_free = ask.policy == Policy::LeastFree;
        let mut sums = vec![(0, 0); if least_free { ask.ranked().len() } else { 0 }];
        let (mut pods, mut units) = (0u64, 0u64);
        if leaf {
            for &n in domain.node_ids() {
                let fit = node_fit(state, n, ask);
                self.fit[n] = fit;
                self.penalty[n] = node_penalty(state, n, ask.task);
                pods += fit;
                units += fit / ask.k;
                if least_free {
                    let own = node_sums(state.node(n), ask);
                    self.node_rank[n] = free_share(&own);
                    for (total, part) in sums.iter_mut().zip(own) {
                        total.0 += part.0;
                        total.1 += part.1;
                    }
                } else if ask.policy != Policy::BestFit {
                    self.node_rank[n] = node_rank(state.node(n), ask);
                }
            }
            if ask.policy == Policy::KeepWhole {
                let free = domain.node_ids().iter().all(|&n| self.node_rank[n] == 1);
                self.domain_rank[id] = i64::from(free);
            }
        } else {
            for &child in &domain.children {
                let (p, u) = self.visit(state, child, ask, prune, &mut sums);
                pods += p;
                units += u;
            }
            if ask.policy == Policy::KeepWhole {
                let free = domain.children.iter().all(|&c| self.domain_rank[c] == 1);
                self.domain_rank[id] = i64::from(free);
            }
        }
        if least_free {
            self.domain_rank[id] = free_share(&sums);
            for (total, part) in parent_sums.iter_mut().zip(sums) {
                total.0 += part.0;
                total.1 += part.1;
            }
        }
        if domain.depth >= ask.s {
            units = pods / ask.k;
        }
        self.pods[id] = pods;
        self.units[id] = units;
        (pods, units)
    }
}

impl Capacities {
    /// Keep-whole: turns the free flags `visit` left (1 free, 0 not) into ranks: for each
    /// domain and node below `id`, how many free domains (and the node itself) lie on its chain
    /// from `id` down, `above` counting those over `id`. Freedom is inherited downward (a free
    /// domain's parts are free), so the free ones on a chain are its lower end.
    fn add_free_above(&mut self, state: &ClusterState, id: usize, above: i64, policy: Policy) {
        if policy != Policy::KeepWhole {
            return;
        }
        let domain = &state.domains[id];
        let here = above + self.domain_rank[id];
        self.domain_rank[id] = here;
        if domain.children.is_empty() {
            for &n in domain.node_ids() {
                self.node_rank[n] += here;
            }
        } else {
            for &child in &domain.children {
                self.add_free_above(state, child, here, policy);
            }
        }
    }
}

/// What a task's capacities depend on besides the state: its requests, filters and slices.
fn cache_key(ask: &Ask<'_>) -> String {
    format!(
        "{:?}|{:?}|{:?}|{}|{}|{}|{:?}",
        ask.requests,
        ask.task.node_selector,
        ask.task.tolerations,
        ask.k,
        ask.s,
        ask.loose_ok,
        ask.avoid
    )
}

impl Capacities {
    /// The task's capacities over the whole cluster, from the cache when it has them (only
    /// for the best-fit policy: the other policies rank by usage sums the cache does not keep).
    pub(crate) fn cached(state: &ClusterState, ask: &Ask<'_>) -> Arc<Self> {
        if ask.policy != Policy::BestFit {
            return Arc::new(Self::of_cluster(state, ask, true));
        }
        state.fit_cache.lookup(
            cache_key(ask),
            |caps, node| caps.refresh_node(state, node, ask),
            || Self::of_cluster(state, ask, false),
        )
    }

    /// Brings one node's fit up to date and carries the change up its domains.
    fn refresh_node(&mut self, state: &ClusterState, id: usize, ask: &Ask<'_>) {
        let Some(node) = state.nodes.get(id).and_then(Option::as_ref) else {
            return;
        };
        let new = node_fit(state, id, ask);
        let old = self.fit[id];
        if new == old {
            return;
        }
        self.fit[id] = new;
        let Some(leaf) = node.leaf else {
            if let Some(entry) = self.loose.iter_mut().find(|e| e.0 == id) {
                entry.1 = new;
            }
            return;
        };
        let mut at = Some(leaf);
        let mut child_units: i128 = 0;
        while let Some(d) = at {
            let domain = &state.domains[d];
            let pods = i128::from(self.pods[d]) + i128::from(new) - i128::from(old);
            self.pods[d] = u64::try_from(pods).unwrap_or(0);
            let before = i128::from(self.units[d]);
            let after = if domain.depth >= ask.s {
                i128::from(self.pods[d] / ask.k)
            } else if d == leaf {
                before + i128::from(new / ask.k) - i128::from(old / ask.k)
            } else {
                before + child_units
            };
            self.units[d] = u64::try_from(after).unwrap_or(0);
            child_units = after - before;
            at = domain.parent;
        }
    }
}
