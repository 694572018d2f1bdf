//! How many pods (and slices) of one task every node and domain can take right now.
//!
//! A node's fit is the minimum over requested resources of `free / request` (and of free `pods`
//! when the node has that resource), zero when a filter refuses the node. A domain's unit capacity
//! is `pods / k` at or below the slice depth `s` and the sum of its children's above it, so it
//! never grows going down the tree; the search relies on that to walk only fitting domains.
//! Whole domains are skipped when their aggregates show that no node in them takes one pod.

use crate::model::{Effect, TaskSpec, POD, UNLIMITED};
use crate::state::{ClusterState, Domain, Node};

/// One task to place now: `count` units of `k` pods, each unit inside one depth-`s` domain.
#[derive(Debug, Clone)]
pub(crate) struct Ask<'a> {
    pub(crate) index: usize,
    pub(crate) task: &'a TaskSpec,
    /// Interned positive requests, `pods` left out.
    pub(crate) requests: &'a [(usize, i64)],
    pub(crate) count: u64,
    pub(crate) k: u64,
    pub(crate) s: usize,
    pub(crate) loose_ok: bool,
}

impl Ask<'_> {
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
}

/// Capacities of one task, indexed by domain id and node id.
#[derive(Debug, Clone)]
pub(crate) struct Capacities {
    pub(crate) pods: Vec<u64>,
    pub(crate) units: Vec<u64>,
    pub(crate) fit: Vec<u64>,
    pub(crate) penalty: Vec<u8>,
    pub(crate) loose: Vec<(usize, u64)>,
}

fn tolerated(task: &TaskSpec, taint: &crate::model::Taint) -> bool {
    task.tolerations.iter().any(|t| t.tolerates(taint))
}

/// How many pods of the task `node` takes.
pub(crate) fn node_fit(node: &Node, ask: &Ask<'_>) -> u64 {
    if !node.schedulable() {
        return 0;
    }
    let labels = &node.spec.labels;
    if ask
        .task
        .node_selector
        .iter()
        .any(|(k, v)| labels.get(k) != Some(v))
    {
        return 0;
    }
    if node
        .spec
        .taints
        .iter()
        .any(|t| t.effect != Effect::PreferNoSchedule && !tolerated(ask.task, t))
    {
        return 0;
    }
    let mut fit = UNLIMITED;
    for &(r, milli) in ask.requests {
        let free = u64::try_from(node.free(r).max(0)).unwrap_or(0);
        fit = fit.min(free / milli.unsigned_abs());
    }
    if node.has_pods {
        let free = u64::try_from(node.free(0).max(0)).unwrap_or(0);
        fit = fit.min(free / POD.unsigned_abs());
    }
    fit
}

/// 1 when the node has a `PreferNoSchedule` taint the task does not tolerate.
pub(crate) fn node_penalty(node: &Node, task: &TaskSpec) -> u8 {
    u8::from(
        node.spec
            .taints
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
    fn empty(state: &ClusterState) -> Self {
        Self {
            pods: vec![0; state.domains.len()],
            units: vec![0; state.domains.len()],
            fit: vec![0; state.nodes.len()],
            penalty: vec![0; state.nodes.len()],
            loose: Vec::new(),
        }
    }

    /// Capacities over the whole cluster; `prune` lets the aggregates skip hopeless domains.
    pub(crate) fn of_cluster(state: &ClusterState, ask: &Ask<'_>, prune: bool) -> Self {
        let mut caps = Self::empty(state);
        for &root in &state.roots {
            caps.visit(state, root, ask, prune);
        }
        if ask.loose_ok {
            for &id in &state.loose {
                let node = state.node(id);
                caps.fit[id] = node_fit(node, ask);
                caps.penalty[id] = node_penalty(node, ask.task);
                caps.loose.push((id, caps.fit[id]));
            }
        }
        caps
    }

    /// Capacities inside one domain only.
    pub(crate) fn of_domain(state: &ClusterState, domain: usize, ask: &Ask<'_>) -> Self {
        let mut caps = Self::empty(state);
        caps.visit(state, domain, ask, true);
        caps
    }

    /// Capacity of one node only.
    pub(crate) fn of_node(state: &ClusterState, node: usize, ask: &Ask<'_>) -> Self {
        let mut caps = Self::empty(state);
        caps.fit[node] = node_fit(state.node(node), ask);
        caps.penalty[node] = node_penalty(state.node(node), ask.task);
        caps
    }

    fn visit(&mut self, state: &ClusterState, id: usize, ask: &Ask<'_>, prune: bool) -> (u64, u64) {
        let domain = &state.domains[id];
        if domain.node_count == 0 || (prune && pruned(domain, ask)) {
            self.pods[id] = 0;
            self.units[id] = 0;
            return (0, 0);
        }
        let (mut pods, mut units) = (0u64, 0u64);
        if domain.children.is_empty() {
            for &n in &domain.nodes {
                let node = state.node(n);
                let fit = node_fit(node, ask);
                self.fit[n] = fit;
                self.penalty[n] = node_penalty(node, ask.task);
                pods += fit;
                units += fit / ask.k;
            }
        } else {
            for &child in &domain.children {
                let (p, u) = self.visit(state, child, ask, prune);
                pods += p;
                units += u;
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
