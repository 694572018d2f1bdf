//! The incremental cluster state: nodes, the topology tree and per-domain aggregates.
//!
//! Resources are interned to small indexes so a node's allocatable and used amounts are dense
//! vectors. Every domain keeps two aggregates over its nodes, updated along the node's chain of
//! ancestors (O(depth)) on every change: the sum of positive free amounts per resource and an
//! upper bound of the largest free amount of any node. The search uses them to skip whole domains
//! in which no node can take even one pod.

use std::collections::HashMap;

use crate::fit_cache::FitCache;
use crate::model::{
    Amounts, GangSpec, NodeSpec, PlacedPods, PlacerError, Usage, POD, PODS, SEARCH_BUDGET,
};

/// Pods on one node by ids: `(node id, interned per-pod requests, count)`.
pub(crate) type NodePods = (usize, Vec<(usize, i64)>, u64);

/// The resource that stands for a gang's per-node limit (see `ClusterState::per_node_limits`);
/// a space is never part of a Kubernetes resource name, so it cannot meet a real one.
pub(crate) const LIMIT_OF_GANG: &str = "per-node limit of the gang";
/// The prefix of a task's per-node limit resource; the task's index follows.
pub(crate) const LIMIT_OF_TASK: &str = "per-node limit of task ";
/// Free amount that stands for "no limit" (a node without the `pods` resource).
pub(crate) const NO_LIMIT: i64 = i64::MAX / 4;
/// Node flag: schedulable and ready.
pub(crate) const SCHEDULABLE: u8 = 1;
/// Node flag: has at least one taint.
pub(crate) const TAINTED: u8 = 2;

/// Interned resource names; `pods` is always index 0.
#[derive(Debug, Clone)]
pub(crate) struct Resources {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl Resources {
    fn new() -> Self {
        let mut resources = Self {
            names: Vec::new(),
            index: HashMap::new(),
        };
        resources.intern(PODS);
        resources
    }

    pub(crate) fn intern(&mut self, name: &str) -> usize {
        if let Some(&id) = self.index.get(name) {
            return id;
        }
        self.names.push(name.to_owned());
        self.index.insert(name.to_owned(), self.names.len() - 1);
        self.names.len() - 1
    }

    pub(crate) fn name(&self, id: usize) -> &str {
        &self.names[id]
    }
}

/// A node in the state.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) spec: NodeSpec,
    pub(crate) allocatable: Vec<i64>,
    pub(crate) used: Vec<i64>,
    pub(crate) has_pods: bool,
    /// Label values at every effective level; `None` for a loose node (a level label missing).
    pub(crate) path: Option<Vec<String>>,
    /// The deepest domain holding the node.
    pub(crate) leaf: Option<usize>,
}

impl Node {
    /// Free amount of resource `r`; the `pods` of a node without that resource are unlimited.
    pub(crate) fn free(&self, r: usize) -> i64 {
        if r == 0 && !self.has_pods {
            return NO_LIMIT;
        }
        self.allocatable.get(r).copied().unwrap_or(0) - self.used.get(r).copied().unwrap_or(0)
    }

    pub(crate) fn schedulable(&self) -> bool {
        !self.spec.unschedulable && self.spec.ready
    }
}

/// A topology domain.
#[derive(Debug, Clone)]
pub(crate) struct Domain {
    pub(crate) depth: usize,
    pub(crate) path: Vec<String>,
    pub(crate) parent: Option<usize>,
    /// Child domains (empty at the deepest level).
    pub(crate) children: Vec<usize>,
    /// Nodes (only at the deepest level).
    pub(crate) nodes: Vec<usize>,
    /// A copy of the node when there is exactly one (the usual leaf), read without following
    /// the `nodes` pointer.
    single: [usize; 1],
    /// Nodes anywhere below.
    pub(crate) node_count: usize,
    /// Schedulable and ready nodes below.
    pub(crate) ready_count: usize,
    /// Per resource, sum over nodes of `max(free, 0)`.
    pub(crate) sum_free: Vec<i128>,
    /// Per resource, at least the largest free amount of any node below (an upper bound: it is
    /// raised at once and lowered only by a rebuild, so pruning with it stays correct).
    pub(crate) max_free: Vec<i64>,
}

impl Domain {
    /// The nodes of a leaf domain, sorted by name.
    pub(crate) fn node_ids(&self) -> &[usize] {
        if self.nodes.len() == 1 {
            &self.single
        } else {
            &self.nodes
        }
    }

    pub(crate) fn max_free(&self, r: usize) -> i64 {
        self.max_free.get(r).copied().unwrap_or(i64::MIN)
    }

    pub(crate) fn sum_free(&self, r: usize) -> i128 {
        self.sum_free.get(r).copied().unwrap_or(0)
    }
}

/// Nodes, domains and aggregates.
#[derive(Debug, Clone)]
pub struct ClusterState {
    pub(crate) levels: Vec<String>,
    pub(crate) implicit_host: bool,
    pub(crate) resources: Resources,
    pub(crate) nodes: Vec<Option<Node>>,
    free_slots: Vec<usize>,
    pub(crate) by_name: HashMap<String, usize>,
    pub(crate) domains: Vec<Domain>,
    domain_index: HashMap<Vec<String>, usize>,
    /// Top-level domains, sorted by path.
    pub(crate) roots: Vec<usize>,
    /// Nodes that lack a level label, sorted by name.
    pub(crate) loose: Vec<usize>,
    /// Position of each domain in a depth-first walk over sorted children: for domains of one
    /// depth, the order of their paths. Recomputed lazily after the tree changes.
    pub(crate) domain_rank: Vec<u32>,
    /// The same for nodes (tree nodes by path then name; loose nodes by name).
    pub(crate) node_rank: Vec<u32>,
    ranks_dirty: bool,
    /// `free_columns[r][node]` is the node's free amount of resource `r`: the search reads
    /// these compact columns instead of the scattered node records, which keeps large clusters
    /// in cache.
    pub(crate) free_columns: Vec<Vec<i64>>,
    /// Per node, `SCHEDULABLE` and `TAINTED` bits.
    pub(crate) flags: Vec<u8>,
    /// Capacities of recent request shapes and the log that keeps them current.
    pub(crate) fit_cache: FitCache,
    /// Steps one exact-search attempt may take (see `model::SEARCH_BUDGET`).
    pub(crate) search_budget: u64,
}

fn grow<T: Clone>(values: &mut Vec<T>, len: usize, fill: T) {
    if values.len() < len {
        values.resize(len, fill);
    }
}

impl ClusterState {
    /// Sets how many steps one exact-search attempt may take before it gives up (at least 1).
    /// Smaller budgets give up sooner on gangs whose search space is huge.
    pub fn set_search_budget(&mut self, steps: u64) -> Result<(), PlacerError> {
        if steps == 0 {
            return Err(PlacerError("search_budget: must be at least 1".into()));
        }
        self.search_budget = steps;
        Ok(())
    }

    /// An empty state. `levels` are the effective levels (the per-node level last);
    /// `implicit_host` says the per-node level takes the node's name instead of a label.
    pub fn new(levels: Vec<String>, implicit_host: bool) -> Result<Self, PlacerError> {
        if levels.is_empty() {
            return Err(PlacerError(
                "levels: at least the per-node level is needed".into(),
            ));
        }
        Ok(Self {
            levels,
            implicit_host,
            resources: Resources::new(),
            nodes: Vec::new(),
            free_slots: Vec::new(),
            by_name: HashMap::new(),
            domains: Vec::new(),
            domain_index: HashMap::new(),
            roots: Vec::new(),
            loose: Vec::new(),
            domain_rank: Vec::new(),
            node_rank: Vec::new(),
            ranks_dirty: true,
            free_columns: Vec::new(),
            flags: Vec::new(),
            search_budget: SEARCH_BUDGET,
            fit_cache: FitCache::default(),
        })
    }

    /// The effective levels.
    pub fn levels(&self) -> &[String] {
        &self.levels
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.by_name.len()
    }

    fn path_of(&self, spec: &NodeSpec) -> Option<Vec<String>> {
        let named = if self.implicit_host {
            &self.levels[..self.levels.len() - 1]
        } else {
            &self.levels[..]
        };
        let mut path = Vec::with_capacity(self.levels.len());
        for level in named {
            path.push(spec.labels.get(level)?.clone());
        }
        if self.implicit_host {
            path.push(spec.name.clone());
        }
        Some(path)
    }

    fn domain_for(&mut self, path: &[String]) -> usize {
        if let Some(&id) = self.domain_index.get(path) {
            return id;
        }
        let parent = if path.len() > 1 {
            Some(self.domain_for(&path[..path.len() - 1]))
        } else {
            None
        };
        let id = self.domains.len();
        self.domains.push(Domain {
            depth: path.len() - 1,
            path: path.to_vec(),
            parent,
            children: Vec::new(),
            nodes: Vec::new(),
            single: [0],
            node_count: 0,
            ready_count: 0,
            sum_free: Vec::new(),
            max_free: Vec::new(),
        });
        self.domain_index.insert(path.to_vec(), id);
        let siblings = match parent {
            Some(p) => &self.domains[p].children,
            None => &self.roots,
        };
        let at = siblings.partition_point(|&s| self.domains[s].path.as_slice() < path);
        match parent {
            Some(p) => self.domains[p].children.insert(at, id),
            None => self.roots.insert(at, id),
        }
        id
    }

    fn ancestors(&self, leaf: Option<usize>) -> Vec<usize> {
        let mut chain = Vec::with_capacity(self.levels.len());
        let mut at = leaf;
        while let Some(id) = at {
            chain.push(id);
            at = self.domains[id].parent;
        }
        chain
    }

    /// Adds a node; its name must be new.
    pub fn add_node(&mut self, spec: NodeSpec) -> Result<(), PlacerError> {
        self.fit_cache.reset();
        if self.by_name.contains_key(&spec.name) {
            return Err(PlacerError(format!(
                "node.name: node {:?} already exists",
                spec.name
            )));
        }
        let mut allocatable = Vec::new();
        let mut has_pods = false;
        for (name, milli) in &spec.allocatable {
            let r = self.resources.intern(name);
            grow(&mut allocatable, r + 1, 0);
            allocatable[r] = *milli;
            has_pods |= r == 0;
        }
        let mut used = Vec::new();
        for (name, milli) in &spec.used {
            let r = self.resources.intern(name);
            grow(&mut used, r + 1, 0);
            used[r] = *milli;
        }
        let path = self.path_of(&spec);
        let leaf = path.as_ref().map(|p| self.domain_for(p));
        let node = Node {
            spec,
            allocatable,
            used,
            has_pods,
            path,
            leaf,
        };
        let id = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                self.nodes.push(None);
                self.nodes.len() - 1
            }
        };
        self.by_name.insert(node.spec.name.clone(), id);
        if leaf.is_none() {
            let at = self.loose.partition_point(|&n| {
                self.nodes[n]
                    .as_ref()
                    .is_some_and(|other| other.spec.name < node.spec.name)
            });
            self.loose.insert(at, id);
        }
        if let Some(leaf) = leaf {
            let nodes = &mut self.domains[leaf].nodes;
            let at = nodes.partition_point(|&n| {
                self.nodes[n]
                    .as_ref()
                    .is_some_and(|other| other.spec.name < node.spec.name)
            });
            nodes.insert(at, id);
            let domain = &mut self.domains[leaf];
            domain.single = [domain.nodes[0]];
        }
        self.nodes[id] = Some(node);
        self.sync_columns();
        self.refresh_columns(id);
        self.account(id, 1);
        self.ranks_dirty = true;
        Ok(())
    }

    /// Replaces a node's spec (same name): usage and labels come from the new spec.
    pub fn update_node(&mut self, spec: NodeSpec) -> Result<(), PlacerError> {
        if !self.by_name.contains_key(&spec.name) {
            return Err(PlacerError(format!("node.name: no node {:?}", spec.name)));
        }
        self.remove_node(&spec.name.clone())?;
        self.add_node(spec)
    }

    /// Replaces a node's spec (same name) but keeps the usage its pods added: the new spec's
    /// `used` comes on top of the node's current usage. A live cluster's mirror needs this,
    /// because a Node object changes (labels, taints, readiness) without its pods changing.
    pub fn update_node_keeping_usage(&mut self, mut spec: NodeSpec) -> Result<(), PlacerError> {
        let current = self
            .node_used(&spec.name)
            .ok_or_else(|| PlacerError(format!("node.name: no node {:?}", spec.name)))?;
        let mut merged: HashMap<String, i64> = HashMap::new();
        for (resource, milli) in current.into_iter().chain(spec.used.drain(..)) {
            *merged.entry(resource).or_insert(0) += milli;
        }
        let mut used: Vec<(String, i64)> = merged.into_iter().filter(|&(_, m)| m != 0).collect();
        used.sort();
        spec.used = Amounts(used);
        self.update_node(spec)
    }

    /// One node's usage by resource name, zero entries left out; `None` for an unknown node.
    pub fn node_used(&self, name: &str) -> Option<Vec<(String, i64)>> {
        let node = self.node(self.node_id(name)?);
        let mut used: Vec<(String, i64)> = node
            .used
            .iter()
            .enumerate()
            .filter(|&(_, &v)| v != 0)
            .map(|(r, &v)| (self.resources.name(r).to_owned(), v))
            .collect();
        used.sort();
        Some(used)
    }

    /// Removes a node by name.
    pub fn remove_node(&mut self, name: &str) -> Result<(), PlacerError> {
        self.fit_cache.reset();
        let id = self
            .by_name
            .get(name)
            .copied()
            .ok_or_else(|| PlacerError(format!("name: no node {name:?}")))?;
        self.account(id, -1);
        self.by_name.remove(name);
        let node = self.nodes[id].take();
        match node.and_then(|n| n.leaf) {
            Some(leaf) => {
                let domain = &mut self.domains[leaf];
                domain.nodes.retain(|&n| n != id);
                domain.single = [domain.nodes.first().copied().unwrap_or(0)];
            }
            None => self.loose.retain(|&n| n != id),
        }
        self.free_slots.push(id);
        self.ranks_dirty = true;
        Ok(())
    }

    /// Adds (`sign = 1`) or removes (`sign = -1`) a node's contribution to its ancestors.
    fn account(&mut self, id: usize, sign: i64) {
        let Some(node) = self.nodes[id].as_ref() else {
            return;
        };
        let chain = self.ancestors(node.leaf);
        let resources = self.resources.names.len();
        let frees: Vec<i64> = (0..resources).map(|r| node.free(r)).collect();
        let ready = node.schedulable();
        for d in chain {
            let domain = &mut self.domains[d];
            grow(&mut domain.sum_free, resources, 0);
            grow(&mut domain.max_free, resources, i64::MIN);
            if sign > 0 {
                domain.node_count += 1;
                domain.ready_count += usize::from(ready);
            } else {
                domain.node_count -= 1;
                domain.ready_count -= usize::from(ready);
            }
            for (r, &free) in frees.iter().enumerate() {
                domain.sum_free[r] += i128::from(sign) * i128::from(free.max(0));
                if sign > 0 {
                    domain.max_free[r] = domain.max_free[r].max(free);
                }
            }
        }
    }

    /// Changes a node's usage by `sign * count` pods of `requests` and updates its ancestors.
    pub(crate) fn apply(&mut self, id: usize, requests: &[(usize, i64)], count: u64, sign: i64) {
        let count = i64::try_from(count).unwrap_or(i64::MAX);
        let resources = self.resources.names.len();
        let Some(node) = self.nodes[id].as_mut() else {
            return;
        };
        grow(&mut node.used, resources, 0);
        let mut changes: Vec<(usize, i64, i64)> = Vec::with_capacity(requests.len() + 1);
        let pods = std::iter::once((0usize, POD));
        for (r, milli) in requests
            .iter()
            .copied()
            .filter(|&(r, m)| r != 0 && m != 0)
            .chain(pods)
        {
            let before = node.free(r);
            node.used[r] += sign * milli * count;
            changes.push((r, before, node.free(r)));
        }
        let leaf = node.leaf;
        for &(r, _, after) in &changes {
            self.free_columns[r][id] = after;
        }
        self.fit_cache.touch(id);
        for d in self.ancestors(leaf) {
            let domain = &mut self.domains[d];
            grow(&mut domain.sum_free, resources, 0);
            grow(&mut domain.max_free, resources, i64::MIN);
            for &(r, before, after) in &changes {
                domain.sum_free[r] += i128::from(after.max(0)) - i128::from(before.max(0));
                domain.max_free[r] = domain.max_free[r].max(after);
            }
        }
    }

    /// A gang's per-node limits as resources, one list per task. A limit is a resource no node
    /// lists: every node has `max * POD` of it while the gang is placed, and each pod of a
    /// limited task takes one `POD`, so the search's own arithmetic (fits, domain aggregates,
    /// the exact search's bounds, apply and undo) keeps every limit with no rule of its own.
    /// The gang's limit counts the pods of all its tasks together; a task's, its own. Placed
    /// pods never carry them (`assume` takes the task's requests only), so they are always
    /// free again once a placement is decided.
    pub(crate) fn per_node_limits(&mut self, gang: &GangSpec) -> Vec<Vec<(usize, i64)>> {
        let gang_limit = gang
            .max_per_node
            .map(|max| self.limit_resource(LIMIT_OF_GANG.to_owned(), max));
        gang.tasks
            .iter()
            .enumerate()
            .map(|(index, task)| {
                let own = task
                    .max_per_node
                    .map(|max| self.limit_resource(format!("{LIMIT_OF_TASK}{index}"), max));
                gang_limit
                    .into_iter()
                    .chain(own)
                    .map(|r| (r, POD))
                    .collect()
            })
            .collect()
    }

    /// Interns the limit resource `name` and gives every node `max` pods' worth of it.
    fn limit_resource(&mut self, name: String, max: u64) -> usize {
        let r = self.intern_requests(&[(name, POD)])[0].0;
        let milli = i64::try_from(max)
            .unwrap_or(i64::MAX / POD)
            .min(i64::MAX / POD / 4)
            * POD;
        let resources = self.resources.names.len();
        let mut changed = false;
        for node in self.nodes.iter_mut().flatten() {
            grow(&mut node.allocatable, resources, 0);
            grow(&mut node.used, resources, 0);
            if node.allocatable[r] != milli {
                node.allocatable[r] = milli;
                changed = true;
            }
        }
        if !changed {
            return r;
        }
        // Fits computed with the old amount are stale: drop them, and recount this resource's
        // aggregates from the nodes.
        self.fit_cache.reset();
        for domain in &mut self.domains {
            grow(&mut domain.sum_free, resources, 0);
            grow(&mut domain.max_free, resources, i64::MIN);
            domain.sum_free[r] = 0;
            domain.max_free[r] = i64::MIN;
        }
        for id in 0..self.nodes.len() {
            let Some(node) = self.nodes[id].as_ref() else {
                continue;
            };
            let free = node.free(r);
            let leaf = node.leaf;
            self.free_columns[r][id] = free;
            for d in self.ancestors(leaf) {
                let domain = &mut self.domains[d];
                domain.sum_free[r] += i128::from(free.max(0));
                domain.max_free[r] = domain.max_free[r].max(free);
            }
        }
        r
    }

    /// Every node's usage by resource name, zero entries left out (for comparing states).
    pub fn used(&self) -> Usage {
        let mut result: Vec<(String, Vec<(String, i64)>)> = self
            .nodes
            .iter()
            .flatten()
            .map(|node| {
                let mut used: Vec<(String, i64)> = node
                    .used
                    .iter()
                    .enumerate()
                    .filter(|&(_, &v)| v != 0)
                    .map(|(r, &v)| (self.resources.name(r).to_owned(), v))
                    .collect();
                used.sort();
                (node.spec.name.clone(), used)
            })
            .collect();
        result.sort();
        result
    }

    /// Resource indexes for `requests`; names no node has are interned so they count as 0 free.
    pub(crate) fn intern_requests(&mut self, requests: &[(String, i64)]) -> Vec<(usize, i64)> {
        let ids = requests
            .iter()
            .map(|(name, milli)| (self.resources.intern(name), *milli))
            .collect();
        self.sync_columns();
        ids
    }

    /// One free column per interned resource, one row per node slot.
    fn sync_columns(&mut self) {
        let slots = self.nodes.len();
        while self.free_columns.len() < self.resources.names.len() {
            let r = self.free_columns.len();
            let column = self
                .nodes
                .iter()
                .map(|n| n.as_ref().map_or(0, |n| n.free(r)))
                .collect();
            self.free_columns.push(column);
        }
        for column in &mut self.free_columns {
            column.resize(slots, 0);
        }
        self.flags.resize(slots, 0);
    }

    /// Copies a node's free amounts and flags into the columns.
    fn refresh_columns(&mut self, id: usize) {
        let Some(node) = self.nodes[id].as_ref() else {
            return;
        };
        for (r, column) in self.free_columns.iter_mut().enumerate() {
            column[id] = node.free(r);
        }
        let mut flags = 0;
        if node.schedulable() {
            flags |= SCHEDULABLE;
        }
        if !node.spec.taints.is_empty() {
            flags |= TAINTED;
        }
        self.flags[id] = flags;
    }

    /// The node id for a name.
    pub(crate) fn node_id(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    pub(crate) fn node(&self, id: usize) -> &Node {
        self.nodes[id].as_ref().expect("live node id")
    }

    /// Recomputes every aggregate from the nodes, tightening the `max_free` upper bounds.
    pub fn rebuild_aggregates(&mut self) {
        self.fit_cache.reset();
        for domain in &mut self.domains {
            domain.node_count = 0;
            domain.ready_count = 0;
            domain.sum_free.clear();
            domain.max_free.clear();
        }
        let ids: Vec<usize> = self.by_name.values().copied().collect();
        for id in ids {
            self.account(id, 1);
        }
    }

    /// Brings the tie-breaking ranks up to date after nodes were added or removed.
    pub(crate) fn refresh_ranks(&mut self) {
        if !self.ranks_dirty {
            return;
        }
        self.domain_rank = vec![0; self.domains.len()];
        self.node_rank = vec![0; self.nodes.len()];
        let (mut next_domain, mut next_node) = (0u32, 0u32);
        let mut stack: Vec<usize> = self.roots.iter().rev().copied().collect();
        while let Some(d) = stack.pop() {
            self.domain_rank[d] = next_domain;
            next_domain += 1;
            for &n in &self.domains[d].nodes {
                self.node_rank[n] = next_node;
                next_node += 1;
            }
            stack.extend(self.domains[d].children.iter().rev());
        }
        for (position, &n) in self.loose.iter().enumerate() {
            self.node_rank[n] = u32::try_from(position).unwrap_or(u32::MAX);
        }
        self.ranks_dirty = false;
    }

    /// Checks `(node, requests, count)` items before [`Self::assume`] or [`Self::release`].
    fn check_items(
        &mut self,
        items: &[PlacedPods],
        release: bool,
    ) -> Result<Vec<NodePods>, PlacerError> {
        let mut resolved = Vec::with_capacity(items.len());
        for (index, (name, requests, count)) in items.iter().enumerate() {
            let id = self.node_id(name).ok_or_else(|| {
                PlacerError(format!(
                    "placement.assignments[{index}].node: no node {name:?}"
                ))
            })?;
            resolved.push((id, self.intern_requests(requests), *count));
        }
        if release {
            let mut totals: HashMap<(usize, usize), i128> = HashMap::new();
            for (index, (id, requests, count)) in resolved.iter().enumerate() {
                let pods = std::iter::once((0usize, POD));
                for (r, milli) in requests
                    .iter()
                    .copied()
                    .filter(|&(r, m)| r != 0 && m != 0)
                    .chain(pods)
                {
                    let total = totals.entry((*id, r)).or_insert(0);
                    *total += i128::from(milli) * i128::from(*count);
                    let node = self.node(*id);
                    if i128::from(node.used.get(r).copied().unwrap_or(0)) < *total {
                        return Err(PlacerError(format!(
                            "placement.assignments[{index}]: releasing it would make {} used on node {:?} negative",
                            self.resources.name(r),
                            node.spec.name
                        )));
                    }
                }
            }
        }
        Ok(resolved)
    }

    /// Adds the usage of placed pods: `(node, per-pod requests, count)`. All or nothing.
    pub fn assume(&mut self, items: &[PlacedPods]) -> Result<(), PlacerError> {
        for (id, requests, count) in self.check_items(items, false)? {
            self.apply(id, &requests, count, 1);
        }
        Ok(())
    }

    /// Removes the usage of pods that are gone. All or nothing; usage never goes negative.
    pub fn release(&mut self, items: &[PlacedPods]) -> Result<(), PlacerError> {
        for (id, requests, count) in self.check_items(items, true)? {
            self.apply(id, &requests, count, -1);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{cluster, gpu_node};

    fn gpu(state: &ClusterState) -> usize {
        state.resources.index["nvidia.com/gpu"]
    }

    #[test]
    fn nodes_build_the_tree_with_sorted_children() {
        let state = cluster(vec![
            gpu_node("n2", "b1", "r2", 8, 0),
            gpu_node("n1", "b1", "r1", 8, 0),
            gpu_node("n0", "b0", "r1", 8, 0),
        ]);
        let roots: Vec<&str> = state
            .roots
            .iter()
            .map(|&d| state.domains[d].path[0].as_str())
            .collect();
        assert_eq!(roots, ["b0", "b1"]);
        let b1 = state.roots[1];
        assert_eq!(state.domains[b1].node_count, 2);
        assert_eq!(state.domains[b1].children.len(), 2);
        assert_eq!(state.node_count(), 3);
    }

    #[test]
    fn aggregates_follow_usage_changes() {
        let mut state = cluster(vec![
            gpu_node("n1", "b1", "r1", 8, 2),
            gpu_node("n2", "b1", "r1", 8, 8),
        ]);
        let g = gpu(&state);
        let root = state.roots[0];
        assert_eq!(state.domains[root].sum_free(g), 6000);
        assert_eq!(state.domains[root].max_free(g), 6000);
        let n1 = state.node_id("n1").expect("n1");
        state.apply(n1, &[(g, 1000)], 4, 1);
        assert_eq!(state.domains[root].sum_free(g), 2000);
        // The maximum is an upper bound: lowered only by a rebuild.
        assert_eq!(state.domains[root].max_free(g), 6000);
        state.rebuild_aggregates();
        assert_eq!(state.domains[root].max_free(g), 2000);
        state.apply(n1, &[(g, 1000)], 4, -1);
        assert_eq!(state.domains[root].sum_free(g), 6000);
        assert_eq!(state.domains[root].max_free(g), 6000);
    }

    #[test]
    fn assume_then_release_restores_usage() {
        let mut state = cluster(vec![gpu_node("n1", "b1", "r1", 8, 2)]);
        let before = state.used();
        let items = vec![(
            "n1".to_owned(),
            vec![("nvidia.com/gpu".to_owned(), 2000)],
            3,
        )];
        state.assume(&items).expect("assume");
        assert_ne!(state.used(), before);
        state.release(&items).expect("release");
        assert_eq!(state.used(), before);
    }

    #[test]
    fn release_refuses_to_go_negative_and_changes_nothing() {
        let mut state = cluster(vec![gpu_node("n1", "b1", "r1", 8, 2)]);
        let before = state.used();
        let items = vec![(
            "n1".to_owned(),
            vec![("nvidia.com/gpu".to_owned(), 1000)],
            3,
        )];
        let err = state.release(&items).expect_err("negative");
        assert!(err.0.contains("placement.assignments[0]"), "{err}");
        assert_eq!(state.used(), before);
    }

    #[test]
    fn unknown_nodes_and_duplicates_are_refused() {
        let mut state = cluster(vec![gpu_node("n1", "b1", "r1", 8, 0)]);
        assert!(state.add_node(gpu_node("n1", "b1", "r1", 8, 0)).is_err());
        assert!(state.remove_node("nope").is_err());
        let items = vec![("nope".to_owned(), Vec::new(), 1)];
        assert_eq!(
            state.assume(&items).expect_err("unknown").0,
            "placement.assignments[0].node: no node \"nope\""
        );
    }

    #[test]
    fn removed_and_readded_nodes_keep_the_aggregates_exact() {
        let mut state = cluster(vec![
            gpu_node("n1", "b1", "r1", 8, 2),
            gpu_node("n2", "b1", "r2", 8, 0),
        ]);
        let g = gpu(&state);
        state.remove_node("n2").expect("remove");
        let root = state.roots[0];
        assert_eq!(state.domains[root].node_count, 1);
        assert_eq!(state.domains[root].sum_free(g), 6000);
        state
            .add_node(gpu_node("n2", "b1", "r2", 8, 4))
            .expect("add");
        assert_eq!(state.domains[root].sum_free(g), 10000);
    }

    #[test]
    fn nodes_missing_a_level_label_are_loose() {
        let mut lone = gpu_node("lone", "b1", "r1", 8, 0);
        lone.labels.remove(crate::testing::RACK);
        let state = cluster(vec![lone, gpu_node("n1", "b1", "r1", 8, 0)]);
        assert_eq!(state.loose.len(), 1);
        assert_eq!(state.domains[state.roots[0]].node_count, 1);
    }
}
