//! The placement rules (see the module docs of `crdkit.placer.reference`, the specification).
//!
//! - `place_in`: the deepest domain or node inside a subtree that holds the pods, best fit first.
//! - `spread`: over as few children as possible, filled fullest first.
//! - `place_group`: tasks that must share a domain; `place`: the whole gang, all or nothing,
//!   with the second attempt at `minAvailable`. A placement is tried on the live state and always
//!   rolled back; only [`ClusterState::assume`] changes the cluster for good.

use std::cmp::{Ordering, Reverse};
use std::sync::Arc;

use crate::capacity::{Ask, Capacities};
use crate::model::{FitReport, GangSpec, Mode, Outcome, Policy, Slice, Status, TaskSpec, Topology};
use crate::state::{ClusterState, NodePods};

mod exact;

/// A place pods can go: a domain, a node in the tree, or a loose node (a child of the root).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Domain(usize),
    Node(usize),
    Loose(usize),
}

/// Why an attempt failed: the contract's one-line reason and its numbers.
struct Unschedulable {
    reason: String,
    fit: Option<FitReport>,
}

type Placed = Vec<(usize, usize, u64)>;

/// One task as the search reads it besides its spec: its interned requests (its own, then
/// its per-node limits), how many of them are its own, and the ids of the nodes it avoids.
struct Prepared {
    requests: Vec<(usize, i64)>,
    ranked: usize,
    avoid: Vec<usize>,
}

/// One gang placement in progress: the state it changes and the log to undo it.
struct Search<'s> {
    state: &'s mut ClusterState,
    log: Vec<NodePods>,
    policy: Policy,
    /// Steps the exact search has taken in the current attempt (see [`crate::model::SEARCH_BUDGET`]).
    steps: u64,
}

/// The entries of one layer, handed out best fit first. The first is found with one scan,
/// since it almost always takes the gang; the rest are sorted only when it does not.
struct Candidates {
    keyed: Vec<(u8, i64, u32, Entry)>,
    first_taken: bool,
    sorted: bool,
}

impl Candidates {
    fn next(&mut self) -> Option<Entry> {
        let key = |c: &(u8, i64, u32, Entry)| (c.0, c.1, c.2);
        if !self.first_taken {
            self.first_taken = true;
            let (at, _) = self
                .keyed
                .iter()
                .enumerate()
                .min_by(|a, b| key(a.1).cmp(&key(b.1)))?;
            return Some(self.keyed.swap_remove(at).3);
        }
        if !self.sorted {
            self.sorted = true;
            self.keyed.sort_by_key(|c| Reverse(key(c)));
        }
        self.keyed.pop().map(|c| c.3)
    }
}

impl Search<'_> {
    fn nodes_depth(&self) -> usize {
        self.state.levels.len()
    }

    fn depth(&self, entry: Option<Entry>) -> isize {
        match entry {
            None => -1,
            Some(Entry::Domain(d)) => isize::try_from(self.state.domains[d].depth).unwrap_or(0),
            Some(Entry::Node(_) | Entry::Loose(_)) => {
                isize::try_from(self.nodes_depth()).unwrap_or(0)
            }
        }
    }

    fn units(&self, entry: Entry, ask: &Ask<'_>, caps: &Capacities) -> u64 {
        match entry {
            Entry::Domain(d) if ask.k == 1 => caps.pods[d],
            Entry::Domain(d) => caps.units[d],
            Entry::Node(n) | Entry::Loose(n) => caps.fit[n] / ask.k,
        }
    }

    /// The policy's "fit" of an entry (rules 3 to 5): less is better.
    fn rank(&self, entry: Entry, ask: &Ask<'_>, caps: &Capacities) -> i64 {
        let units = || i64::try_from(self.units(entry, ask, caps)).unwrap_or(i64::MAX);
        match (self.policy, entry) {
            (Policy::BestFit, _) | (Policy::Binpack, Entry::Domain(_)) => units(),
            (Policy::LeastFree, Entry::Domain(d)) => caps.domain_rank[d],
            (Policy::KeepWhole, Entry::Domain(d)) => keep_whole(caps.domain_rank[d], units()),
            (Policy::KeepWhole, Entry::Node(n) | Entry::Loose(n)) => {
                keep_whole(caps.node_rank[n], units())
            }
            (_, Entry::Node(n) | Entry::Loose(n)) => caps.node_rank[n],
        }
    }

    fn penalty(entry: Entry, caps: &Capacities) -> u8 {
        match entry {
            Entry::Domain(_) => 0,
            Entry::Node(n) | Entry::Loose(n) => caps.penalty[n],
        }
    }

    fn kind(entry: Entry) -> u8 {
        u8::from(matches!(entry, Entry::Loose(_)))
    }

    /// The tie-breaking order: a domain's path, a node's path then name, a loose node's name.
    /// Entries compared here are always of one kind and depth, so the depth-first ranks (which
    /// follow exactly that order) stand in for the strings.
    fn cmp_path(&self, a: Entry, b: Entry) -> Ordering {
        let rank = |e: Entry| match e {
            Entry::Domain(d) => self.state.domain_rank[d],
            Entry::Node(n) | Entry::Loose(n) => self.state.node_rank[n],
        };
        rank(a).cmp(&rank(b))
    }

    fn children(&self, entry: Option<Entry>, ask: &Ask<'_>, caps: &Capacities) -> Vec<Entry> {
        match entry {
            None => {
                let mut kids: Vec<Entry> =
                    self.state.roots.iter().map(|&d| Entry::Domain(d)).collect();
                if ask.loose_ok {
                    kids.extend(caps.loose.iter().map(|&(n, _)| Entry::Loose(n)));
                }
                kids
            }
            Some(Entry::Domain(d)) => {
                let domain = &self.state.domains[d];
                if domain.children.is_empty() {
                    domain.node_ids().iter().map(|&n| Entry::Node(n)).collect()
                } else {
                    domain.children.iter().map(|&c| Entry::Domain(c)).collect()
                }
            }
            Some(Entry::Node(_) | Entry::Loose(_)) => Vec::new(),
        }
    }

    /// Appends the children of a tree entry (domains, or the nodes of a leaf) to `out`.
    fn extend_children(&self, entry: Entry, out: &mut Vec<Entry>) {
        if let Entry::Domain(d) = entry {
            let domain = &self.state.domains[d];
            if domain.children.is_empty() {
                out.extend(domain.node_ids().iter().map(|&n| Entry::Node(n)));
            } else {
                out.extend(domain.children.iter().map(|&c| Entry::Domain(c)));
            }
        }
    }

    /// The children of every entry of `layer` that pass `keep`.
    fn next_layer(&self, layer: &[Entry], keep: impl Fn(&Self, Entry) -> bool) -> Vec<Entry> {
        let mut next = Vec::new();
        let mut scratch = Vec::new();
        for &entry in layer {
            scratch.clear();
            self.extend_children(entry, &mut scratch);
            next.extend(scratch.iter().copied().filter(|&e| keep(self, e)));
        }
        next
    }

    fn assign(&mut self, node: usize, ask: &Ask<'_>, pods: u64, out: &mut Placed) {
        self.state.apply(node, ask.requests, pods, 1);
        self.log.push((node, ask.requests.to_vec(), pods));
        out.push((ask.index, node, pods));
    }

    fn undo(&mut self, mark: usize) {
        while self.log.len() > mark {
            if let Some((node, requests, pods)) = self.log.pop() {
                self.state.apply(node, &requests, pods, -1);
            }
        }
    }

    /// Rule 3: `count` units inside `entry` (`None` is the whole cluster).
    fn place_in(
        &mut self,
        entry: Option<Entry>,
        ask: &Ask<'_>,
        count: u64,
        caps: &Capacities,
        out: &mut Placed,
    ) {
        let depth = self.depth(entry);
        let (ask, count) = if ask.k > 1 && depth >= isize::try_from(ask.s).unwrap_or(0) {
            (ask.plain(), count * ask.k)
        } else {
            (ask.clone(), count)
        };
        if let Some(Entry::Node(n) | Entry::Loose(n)) = entry {
            self.assign(n, &ask, count, out);
            return;
        }
        let mut layer: Vec<Entry> = match entry {
            None => self
                .state
                .roots
                .iter()
                .map(|&d| Entry::Domain(d))
                .filter(|&e| self.units(e, &ask, caps) >= count)
                .collect(),
            Some(e) => vec![e],
        };
        if layer.is_empty() {
            self.spread(None, &ask, count, caps, out);
            return;
        }
        loop {
            let next = self.next_layer(&layer, |search, e| search.units(e, &ask, caps) >= count);
            if next.is_empty() {
                break;
            }
            layer = next;
        }
        let best = layer
            .iter()
            .copied()
            .min_by(|&a, &b| {
                (Self::penalty(a, caps), self.rank(a, &ask, caps))
                    .cmp(&(Self::penalty(b, caps), self.rank(b, &ask, caps)))
                    .then_with(|| self.cmp_path(a, b))
            })
            .expect("a non-empty layer");
        if Some(best) == entry {
            self.spread(entry, &ask, count, caps, out);
        } else {
            self.place_in(Some(best), &ask, count, caps, out);
        }
    }

    /// Rule 4: over as few children as possible, fullest first.
    fn spread(
        &mut self,
        entry: Option<Entry>,
        ask: &Ask<'_>,
        count: u64,
        caps: &Capacities,
        out: &mut Placed,
    ) {
        // (entry, capacity, penalty, policy rank)
        let kids: Vec<(Entry, u64, u8, i64)> = self
            .children(entry, ask, caps)
            .into_iter()
            .map(|e| {
                (
                    e,
                    self.units(e, ask, caps),
                    Self::penalty(e, caps),
                    self.rank(e, ask, caps),
                )
            })
            .filter(|&(_, units, _, _)| units > 0)
            .collect();
        let mut by_size = kids.clone();
        by_size.sort_by(|a, b| {
            (a.2, Reverse(a.1), Self::kind(a.0))
                .cmp(&(b.2, Reverse(b.1), Self::kind(b.0)))
                .then_with(|| self.cmp_path(a.0, b.0))
        });
        let mut remaining = count;
        let mut chosen: Vec<(Entry, u64, u8, i64)> = Vec::new();
        let mut enough = false;
        for &kid in &by_size {
            if kid.1 >= remaining {
                enough = true;
                break;
            }
            chosen.push(kid);
            remaining -= kid.1;
        }
        assert!(enough, "spread called with too little capacity");
        let last = kids
            .iter()
            .filter(|k| k.1 >= remaining && !chosen.iter().any(|c| c.0 == k.0))
            .min_by(|a, b| {
                (a.2, a.3, Self::kind(a.0))
                    .cmp(&(b.2, b.3, Self::kind(b.0)))
                    .then_with(|| self.cmp_path(a.0, b.0))
            })
            .copied()
            .expect("a child that holds the remainder");
        chosen.push(last);
        chosen.sort_by(|a, b| {
            (a.3, Self::kind(a.0))
                .cmp(&(b.3, Self::kind(b.0)))
                .then_with(|| self.cmp_path(a.0, b.0))
        });
        let mut left = count;
        for (kid, units, _, _) in chosen {
            let share = units.min(left);
            left -= share;
            if share > 0 {
                self.place_in(Some(kid), ask, share, caps, out);
            }
        }
    }

    fn ask<'a>(
        &self,
        index: usize,
        task: &'a TaskSpec,
        prepared: &'a Prepared,
        count: u64,
        mode: Mode,
    ) -> Ask<'a> {
        let (requests, ranked, avoid) =
            (&prepared.requests[..], prepared.ranked, &prepared.avoid[..]);
        match task.slice {
            Some(Slice { level: s, size: k }) => Ask {
                index,
                task,
                requests,
                ranked,
                avoid,
                count: count / k,
                k,
                s,
                loose_ok: false,
                policy: self.policy,
            },
            None => Ask {
                index,
                task,
                requests,
                ranked,
                avoid,
                count,
                k: 1,
                s: self.nodes_depth(),
                loose_ok: mode == Mode::Unconstrained,
                policy: self.policy,
            },
        }
    }

    fn root_units(&self, ask: &Ask<'_>, caps: &Capacities) -> u64 {
        let tree: u64 = self.state.roots.iter().map(|&d| caps.units[d]).sum();
        tree + caps.loose.iter().map(|&(_, fit)| fit / ask.k).sum::<u64>()
    }

    /// The entries inside `within` (the whole cluster when `None`) that hold every task alone,
    /// layer by layer: `layers[i]` lies at depth `start + i`.
    fn layers(
        &self,
        asks: &[Ask<'_>],
        all_caps: &[Arc<Capacities>],
        within: Option<Entry>,
    ) -> (usize, Vec<Vec<Entry>>) {
        let alike = alike_asks(asks);
        let fits_all = |search: &Self, e: Entry| {
            asks.iter()
                .zip(all_caps)
                .all(|(a, c)| search.units(e, a, c) >= a.count)
                && alike
                    .iter()
                    .all(|&(i, total)| search.units(e, &asks[i], &all_caps[i]) >= total)
        };
        let (start, mut layer) = match within {
            None => (
                0,
                self.state
                    .roots
                    .iter()
                    .map(|&d| Entry::Domain(d))
                    .filter(|&e| fits_all(self, e))
                    .collect::<Vec<Entry>>(),
            ),
            Some(e) => (
                usize::try_from(self.depth(Some(e))).unwrap_or(0),
                if fits_all(self, e) {
                    vec![e]
                } else {
                    Vec::new()
                },
            ),
        };
        let mut layers: Vec<Vec<Entry>> = Vec::new();
        while !layer.is_empty() {
            let next = self.next_layer(&layer, fits_all);
            layers.push(layer);
            layer = next;
        }
        (start, layers)
    }

    /// The entries of one layer in the order they are tried: best fit first.
    fn candidates(
        &self,
        layer: &[Entry],
        asks: &[Ask<'_>],
        all_caps: &[Arc<Capacities>],
    ) -> Candidates {
        let rank = |e: Entry| match e {
            Entry::Domain(d) => self.state.domain_rank[d],
            Entry::Node(n) | Entry::Loose(n) => self.state.node_rank[n],
        };
        let keyed = layer
            .iter()
            .map(|&e| {
                let penalty = all_caps
                    .iter()
                    .map(|c| Self::penalty(e, c))
                    .max()
                    .unwrap_or(0);
                let fit = asks
                    .iter()
                    .zip(all_caps)
                    .map(|(a, c)| self.rank(e, a, c))
                    .sum();
                (penalty, fit, rank(e), e)
            })
            .collect();
        Candidates {
            keyed,
            first_taken: false,
            sorted: false,
        }
    }

    /// The quick way into one entry: the shared tasks one after another, then each task with
    /// its own topology inside the entry. False when that order does not take them.
    fn greedy_in(
        &mut self,
        entry: Entry,
        asks: &[Ask<'_>],
        all_caps: &[Arc<Capacities>],
        out: &mut Placed,
    ) -> bool {
        let shared: Vec<Ask<'_>> = asks
            .iter()
            .filter(|a| a.task.topology.is_none())
            .cloned()
            .collect();
        if let Some(first) = asks.iter().position(|a| a.task.topology.is_none()) {
            if !self.try_group_in(entry, &shared, &all_caps[first], out) {
                return false;
            }
        }
        for ask in asks {
            if let Some(topology) = ask.task.topology {
                if self
                    .place_group(std::slice::from_ref(ask), topology, out, Some(entry), false)
                    .is_err()
                {
                    return false;
                }
            }
        }
        true
    }

    /// No single domain holds the gang: each shared task in turn over the whole cluster, then
    /// (when `nested`) each task with its own topology. Without `nested` every ask is shared.
    fn greedy_root(
        &mut self,
        asks: &[Ask<'_>],
        topology: Topology,
        nested: bool,
        out: &mut Placed,
    ) -> Result<(), Unschedulable> {
        for ask in asks {
            if nested && ask.task.topology.is_some() {
                continue;
            }
            let caps = Capacities::of_cluster(self.state, ask, true);
            let have = self.root_units(ask, &caps);
            if have < ask.count {
                let mode = topology.mode.as_str();
                let level = match topology.mode {
                    Mode::Unconstrained => String::new(),
                    _ => format!(" {}", self.state.levels[topology.level.unwrap_or(0)]),
                };
                return Err(Unschedulable {
                    reason: format!(
                        "{mode}{level}: the cluster fits {}",
                        ask.units_of(&format!("{have} of {}", ask.count))
                    ),
                    fit: Some(FitReport {
                        best_domain: None,
                        fits: have,
                        wants: ask.count,
                        unit: ask.unit_word(),
                    }),
                });
            }
            self.place_in(None, ask, ask.count, &caps, out);
        }
        if nested {
            for ask in asks {
                if let Some(own) = ask.task.topology {
                    self.place_group(std::slice::from_ref(ask), own, out, None, false)?;
                }
            }
        }
        Ok(())
    }

    /// Rule 5: the tasks inside the lowest entry in `within` (`None`: the cluster) that takes
    /// them, best fit first. For the gang (`nested`), the tasks with a topology of their own go
    /// inside the entry too, and the exact search (rule 8) decides an entry that the quick way
    /// does not take; without it, every ask is placed as a shared one.
    fn place_group(
        &mut self,
        asks: &[Ask<'_>],
        topology: Topology,
        out: &mut Placed,
        within: Option<Entry>,
        nested: bool,
    ) -> Result<(), Unschedulable> {
        let shallowest = match (topology.mode, topology.level) {
            (Mode::Required, Some(level)) => level,
            _ => 0,
        };
        let exact = nested && asks.len() > 1;
        let all_caps: Vec<Arc<Capacities>> = asks
            .iter()
            .map(|a| Capacities::cached(self.state, a))
            .collect();
        let (start, layers) = self.layers(asks, &all_caps, within);
        for depth in (shallowest.max(start)..start + layers.len()).rev() {
            let mut candidates = self.candidates(&layers[depth - start], asks, &all_caps);
            while let Some(entry) = candidates.next() {
                let (mark, placed) = (self.log.len(), out.len());
                let quick = if nested {
                    self.greedy_in(entry, asks, &all_caps, out)
                } else {
                    self.try_group_in(entry, asks, &all_caps[0], out)
                };
                if quick {
                    return Ok(());
                }
                self.undo(mark);
                out.truncate(placed);
                if exact && self.exact(Some(entry), asks, out)? {
                    return Ok(());
                }
            }
        }
        if within.is_some() {
            return Err(Unschedulable {
                reason: "nothing inside the entry holds the task".into(),
                fit: None,
            });
        }
        if topology.mode == Mode::Required {
            return Err(self.required_failure(asks, shallowest));
        }
        let (mark, placed) = (self.log.len(), out.len());
        match self.greedy_root(asks, topology, nested, out) {
            Ok(()) => Ok(()),
            Err(failure) => {
                self.undo(mark);
                out.truncate(placed);
                if exact && self.exact(None, asks, out)? {
                    return Ok(());
                }
                Err(failure)
            }
        }
    }

    /// Places the tasks one after another inside `entry`. The first task sees the state the
    /// group's capacities were computed on, so it reuses them; later ones see earlier pods.
    fn try_group_in(
        &mut self,
        entry: Entry,
        asks: &[Ask<'_>],
        first_caps: &Capacities,
        out: &mut Placed,
    ) -> bool {
        for (index, ask) in asks.iter().enumerate() {
            let fresh;
            let caps = if index == 0 {
                first_caps
            } else {
                fresh = match entry {
                    Entry::Domain(d) => Capacities::of_domain(self.state, d, ask),
                    Entry::Node(n) | Entry::Loose(n) => Capacities::of_node(self.state, n, ask),
                };
                &fresh
            };
            if self.units(entry, ask, caps) < ask.count {
                return false;
            }
            self.place_in(Some(entry), ask, ask.count, caps, out);
        }
        true
    }

    fn domains_at(&self, depth: usize) -> Vec<usize> {
        let mut layer: Vec<usize> = self.state.roots.clone();
        for _ in 0..depth {
            layer = layer
                .iter()
                .flat_map(|&d| self.state.domains[d].children.iter().copied())
                .collect();
        }
        layer.retain(|&d| self.state.domains[d].node_count > 0);
        layer
    }

    fn required_failure(&self, asks: &[Ask<'_>], level: usize) -> Unschedulable {
        let name = &self.state.levels[level];
        let short = name.rsplit('/').next().unwrap_or(name);
        let domains = self.domains_at(level);
        for ask in asks {
            let caps = Capacities::of_cluster(self.state, ask, false);
            let best = domains.iter().copied().min_by(|&a, &b| {
                Reverse(caps.units[a])
                    .cmp(&Reverse(caps.units[b]))
                    .then_with(|| self.state.domains[a].path.cmp(&self.state.domains[b].path))
            });
            let (fits, domain) = match best {
                Some(d) => (caps.units[d], self.state.domains[d].path.last().cloned()),
                None => (0, None),
            };
            if fits < ask.count {
                let shown = domain
                    .clone()
                    .unwrap_or_else(|| format!("no {short} in the cluster"));
                return Unschedulable {
                    reason: format!(
                        "required {name}: the best {short} fits {} ({shown})",
                        ask.units_of(&format!("{fits} of {}", ask.count))
                    ),
                    fit: Some(FitReport {
                        best_domain: domain,
                        fits,
                        wants: ask.count,
                        unit: ask.unit_word(),
                    }),
                };
            }
        }
        let tasks: Vec<String> = asks.iter().map(Ask::counted).collect();
        Unschedulable {
            reason: format!(
                "required {name}: no {short} holds {} together",
                join_and(&tasks)
            ),
            fit: None,
        }
    }

    /// Rule 6, one attempt: every task of the gang at the given counts.
    fn attempt(
        &mut self,
        gang: &GangSpec,
        prepared: &[Prepared],
        counts: &[u64],
    ) -> Result<Placed, Unschedulable> {
        self.steps = 0;
        let mut out = Placed::new();
        let asks: Vec<Ask<'_>> = gang
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mode = t.topology.map_or(gang.topology.mode, |own| own.mode);
                self.ask(i, t, &prepared[i], counts[i], mode)
            })
            .collect();
        self.place_group(&asks, gang.topology, &mut out, None, true)?;
        Ok(out)
    }

    fn lowest_common_domain(&self, placed: &Placed) -> (Option<usize>, Vec<String>) {
        let mut common: Option<&[String]> = None;
        for &(_, node, _) in placed {
            let Some(path) = self.state.node(node).path.as_deref() else {
                return (None, Vec::new());
            };
            common = Some(match common {
                None => path,
                Some(c) => {
                    let same = c.iter().zip(path).take_while(|(a, b)| a == b).count();
                    &c[..same]
                }
            });
        }
        match common {
            Some(c) if !c.is_empty() => (Some(c.len() - 1), c.to_vec()),
            _ => (None, Vec::new()),
        }
    }
}

/// Keep-whole's rank: the free domains (and node) an entry would break, then its best fit.
fn keep_whole(broken: i64, units: i64) -> i64 {
    const UNITS: i64 = 1 << 42; // above UNLIMITED (2^40): units never reach the next count
    broken
        .saturating_mul(UNITS)
        .saturating_add(units.min(UNITS - 1))
}

/// "a", "a and b", "a, b and c": a list in a reason, read as a sentence.
fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

impl ClusterState {
    /// Decides where `gang` goes. The state is unchanged afterwards.
    pub fn place(&mut self, gang: &GangSpec) -> Outcome {
        self.place_with(gang, Policy::BestFit)
    }

    /// [`Self::place`] with a ranking policy.
    pub fn place_with(&mut self, gang: &GangSpec, policy: Policy) -> Outcome {
        let limits = self.per_node_limits(gang);
        let prepared: Vec<Prepared> = gang
            .tasks
            .iter()
            .zip(limits)
            .map(|(t, limits)| {
                let positive: Vec<(String, i64)> = t
                    .requests
                    .iter()
                    .filter(|(name, milli)| name != crate::model::PODS && *milli > 0)
                    .cloned()
                    .collect();
                let mut requests = self.intern_requests(&positive);
                let ranked = requests.len();
                requests.extend(limits);
                let mut avoid: Vec<usize> = t
                    .avoid_nodes
                    .iter()
                    .filter_map(|name| self.node_id(name))
                    .collect();
                avoid.sort_unstable();
                Prepared {
                    requests,
                    ranked,
                    avoid,
                }
            })
            .collect();
        let mut attempts = vec![(
            Status::Placed,
            gang.tasks.iter().map(|t| t.replicas).collect::<Vec<u64>>(),
        )];
        if gang.tasks.iter().any(|t| t.min_available < t.replicas) {
            attempts.push((
                Status::Minimal,
                gang.tasks.iter().map(|t| t.min_available).collect(),
            ));
        }
        self.refresh_ranks();
        let mut search = Search {
            state: self,
            log: Vec::new(),
            policy,
            steps: 0,
        };
        let mut failure = Unschedulable {
            reason: "no attempt".into(),
            fit: None,
        };
        for (status, counts) in attempts {
            let result = search.attempt(gang, &prepared, &counts);
            search.undo(0);
            match result {
                Ok(placed) => {
                    let (level, domain) = search.lowest_common_domain(&placed);
                    let mut merged: Vec<(usize, String, u64)> = Vec::new();
                    let mut named: Vec<(usize, String, u64)> = placed
                        .iter()
                        .map(|&(task, node, count)| {
                            (task, search.state.node(node).spec.name.clone(), count)
                        })
                        .collect();
                    named.sort();
                    for (task, node, count) in named {
                        match merged.last_mut() {
                            Some(last) if last.0 == task && last.1 == node => last.2 += count,
                            _ => merged.push((task, node, count)),
                        }
                    }
                    return Outcome {
                        status,
                        assignments: merged,
                        level,
                        domain,
                        reason: None,
                        fit: None,
                    };
                }
                Err(err) => failure = err,
            }
        }
        Outcome {
            status: Status::Unschedulable,
            assignments: Vec::new(),
            level: None,
            domain: Vec::new(),
            reason: Some(failure.reason),
            fit: failure.fit,
        }
    }
}

/// Asks of plain pods that want the same thing (requests, selector, tolerations, loose
/// nodes, avoided nodes) compete for the same room: an entry holds them all only if it holds the sum of
/// their counts of that one shape. Returns, per group of two or more, the index of its first
/// ask and that sum. A necessary condition only, so it prunes entries that could never take
/// the group (a master and a worker of one pod each, each pod filling a node, would otherwise
/// send every single node to the exact search) without changing any answer.
fn alike_asks(asks: &[Ask<'_>]) -> Vec<(usize, u64)> {
    let shape = |a: &Ask<'_>| {
        let mut requests = a.requests.to_vec();
        requests.sort_unstable();
        let selector = a.task.node_selector.clone();
        (requests, selector, a.loose_ok, a.avoid.to_vec())
    };
    let mut groups: Vec<(usize, u64, usize)> = Vec::new();
    for (index, ask) in asks.iter().enumerate() {
        if ask.k != 1 {
            continue;
        }
        let found = groups.iter_mut().find(|(first, _, _)| {
            let other = &asks[*first];
            shape(other) == shape(ask) && other.task.tolerations == ask.task.tolerations
        });
        match found {
            Some(group) => {
                group.1 += ask.count;
                group.2 += 1;
            }
            None => groups.push((index, ask.count, 1)),
        }
    }
    groups
        .into_iter()
        .filter(|&(_, _, members)| members > 1)
        .map(|(first, total, _)| (first, total))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Effect, Taint};
    use crate::testing::{cluster, gang, gpu_node, gpu_task};
    use std::collections::HashMap;

    fn nodes_of(outcome: &Outcome) -> Vec<(&str, u64)> {
        outcome
            .assignments
            .iter()
            .map(|(_, n, c)| (n.as_str(), *c))
            .collect()
    }

    #[test]
    fn required_rack_goes_to_the_best_fitting_rack() {
        // r1 has 16 free GPUs, r2 has 10: a 10-GPU gang fits both, best fit is r2.
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 0),
            gpu_node("b", "b1", "r1", 8, 0),
            gpu_node("c", "b1", "r2", 8, 3),
            gpu_node("d", "b1", "r2", 8, 3),
        ]);
        let outcome = state.place(&gang(Mode::Required, Some(1), vec![gpu_task("w", 10, 1)]));
        assert_eq!(outcome.status, Status::Placed);
        assert_eq!(outcome.level, Some(1));
        assert_eq!(outcome.domain, ["b1", "r2"]);
        assert_eq!(nodes_of(&outcome), [("c", 5), ("d", 5)]);
    }

    #[test]
    fn a_gang_that_fits_one_node_goes_to_the_fullest_such_node() {
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 0),
            gpu_node("b", "b1", "r1", 8, 5),
            gpu_node("c", "b1", "r2", 8, 4),
        ]);
        let outcome = state.place(&gang(Mode::Unconstrained, None, vec![gpu_task("w", 3, 1)]));
        assert_eq!(nodes_of(&outcome), [("b", 3)]);
        assert_eq!(outcome.level, Some(2));
    }

    #[test]
    fn spreading_uses_the_fewest_nodes_and_fills_the_fullest_first() {
        // Free: a 8, b 8, c 2, d 6 (all in r1). 12 pods: fewest nodes is 2 (8 + the best fit
        // for 4, which is d with 6), filled fullest first: d takes 6, then a takes 6.
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 0),
            gpu_node("b", "b1", "r1", 8, 0),
            gpu_node("c", "b1", "r1", 8, 6),
            gpu_node("d", "b1", "r1", 8, 2),
        ]);
        let outcome = state.place(&gang(Mode::Required, Some(1), vec![gpu_task("w", 12, 1)]));
        assert_eq!(nodes_of(&outcome), [("a", 6), ("d", 6)]);
    }

    fn four_free_nodes() -> ClusterState {
        cluster(vec![
            gpu_node("a", "b1", "r1", 8, 0),
            gpu_node("b", "b1", "r1", 8, 0),
            gpu_node("c", "b1", "r2", 8, 0),
            gpu_node("d", "b1", "r2", 8, 0),
        ])
    }

    #[test]
    fn a_task_limit_of_one_puts_one_rank_on_each_node() {
        let mut state = four_free_nodes();
        let packed = state.place(&gang(Mode::Required, Some(1), vec![gpu_task("w", 2, 1)]));
        assert_eq!(nodes_of(&packed), [("a", 2)]);
        let mut task = gpu_task("w", 2, 1);
        task.max_per_node = Some(1);
        let outcome = state.place(&gang(Mode::Required, Some(1), vec![task]));
        assert_eq!(nodes_of(&outcome), [("a", 1), ("b", 1)]);
        assert_eq!(outcome.domain, ["b1", "r1"]);
    }

    #[test]
    fn a_task_limit_binds_only_its_own_task_and_a_gang_limit_binds_them_all() {
        let mut master = gpu_task("master", 1, 1);
        let mut worker = gpu_task("worker", 1, 1);
        master.max_per_node = Some(1);
        worker.max_per_node = Some(1);
        let mut state = four_free_nodes();
        let each = state.place(&gang(Mode::Unconstrained, None, vec![master, worker]));
        assert_eq!(nodes_of(&each), [("a", 1), ("a", 1)]);
        let mut together = gang(
            Mode::Unconstrained,
            None,
            vec![gpu_task("master", 1, 1), gpu_task("worker", 3, 1)],
        );
        together.max_per_node = Some(1);
        let outcome = state.place(&together);
        let mut nodes: Vec<&str> = nodes_of(&outcome).iter().map(|(n, _)| *n).collect();
        nodes.sort_unstable();
        assert_eq!(nodes, ["a", "b", "c", "d"]);
    }

    #[test]
    fn a_limit_that_no_domain_can_meet_is_unschedulable_and_leaves_nothing_behind() {
        let mut state = four_free_nodes();
        let before = state.used();
        let mut task = gpu_task("w", 3, 1);
        task.max_per_node = Some(1);
        let outcome = state.place(&gang(Mode::Required, Some(1), vec![task]));
        assert_eq!(outcome.status, Status::Unschedulable);
        assert_eq!(
            outcome.reason.as_deref(),
            Some("required t.io/rack: the best rack fits 2 of 3 w pods (r1)")
        );
        assert_eq!(state.used(), before);
        // The limit is gone once decided: an unlimited gang packs as before.
        let packed = state.place(&gang(Mode::Required, Some(1), vec![gpu_task("w", 3, 1)]));
        assert_eq!(nodes_of(&packed), [("a", 3)]);
    }

    #[test]
    fn avoided_nodes_take_no_pods_of_the_task_that_avoids_them() {
        let mut state = four_free_nodes();
        let mut task = gpu_task("w", 2, 1);
        task.avoid_nodes = vec!["a".into(), "no-such-node".into()];
        let outcome = state.place(&gang(Mode::Required, Some(1), vec![task]));
        assert_eq!(nodes_of(&outcome), [("b", 2)]);
        let other = state.place(&gang(Mode::Required, Some(1), vec![gpu_task("w", 2, 1)]));
        assert_eq!(nodes_of(&other), [("a", 2)]);
    }

    #[test]
    fn a_limit_of_two_counts_the_pods_of_the_search_so_far() {
        let mut state = four_free_nodes();
        let mut limited = gang(
            Mode::Required,
            Some(1),
            vec![gpu_task("x", 2, 1), gpu_task("y", 2, 1)],
        );
        limited.max_per_node = Some(2);
        let outcome = state.place(&limited);
        assert_eq!(outcome.status, Status::Placed);
        let mut per_node: HashMap<&str, u64> = HashMap::new();
        for (node, count) in nodes_of(&outcome) {
            *per_node.entry(node).or_insert(0) += count;
        }
        assert!(per_node.values().all(|&pods| pods <= 2), "{per_node:?}");
    }

    #[test]
    fn required_failure_names_the_best_domain_and_the_numbers() {
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 0),
            gpu_node("b", "b1", "r2", 8, 4),
        ]);
        let outcome = state.place(&gang(
            Mode::Required,
            Some(1),
            vec![gpu_task("worker", 12, 1)],
        ));
        assert_eq!(outcome.status, Status::Unschedulable);
        assert!(outcome.assignments.is_empty());
        assert_eq!(
            outcome.reason.as_deref(),
            Some("required t.io/rack: the best rack fits 8 of 12 worker pods (r1)")
        );
        let fit = outcome.fit.expect("fit");
        assert_eq!(
            (fit.best_domain.as_deref(), fit.fits, fit.wants, fit.unit),
            (Some("r1"), 8, 12, "pods")
        );
    }

    #[test]
    fn preferred_climbs_and_spreads_when_nothing_holds_it() {
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 0),
            gpu_node("b", "b2", "r1", 8, 0),
        ]);
        let outcome = state.place(&gang(Mode::Preferred, Some(1), vec![gpu_task("w", 12, 1)]));
        assert_eq!(outcome.status, Status::Placed);
        assert_eq!(outcome.level, None);
        assert!(outcome.domain.is_empty());
        assert_eq!(nodes_of(&outcome), [("a", 8), ("b", 4)]);
    }

    #[test]
    fn min_available_is_the_second_attempt() {
        let mut state = cluster(vec![gpu_node("a", "b1", "r1", 8, 0)]);
        let mut task = gpu_task("w", 10, 1);
        task.min_available = 6;
        let outcome = state.place(&gang(Mode::Required, Some(1), vec![task]));
        assert_eq!(outcome.status, Status::Minimal);
        assert_eq!(nodes_of(&outcome), [("a", 6)]);
    }

    #[test]
    fn slices_stay_inside_one_domain_of_their_level() {
        // Two racks of 6 free GPUs: 8 pods in slices of 4 per rack -> one slice per rack.
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 2),
            gpu_node("b", "b1", "r2", 8, 2),
        ]);
        let mut task = gpu_task("w", 8, 1);
        task.slice = Some(crate::model::Slice { level: 1, size: 4 });
        let outcome = state.place(&gang(Mode::Unconstrained, None, vec![task.clone()]));
        assert_eq!(nodes_of(&outcome), [("a", 4), ("b", 4)]);
        // Three slices do not fit: the reason counts slices.
        task.replicas = 12;
        task.min_available = 12;
        let outcome = state.place(&gang(Mode::Required, Some(0), vec![task]));
        assert_eq!(
            outcome.reason.as_deref(),
            Some("required t.io/block: the best block fits 2 of 3 w slices (b1)")
        );
    }

    #[test]
    fn taints_repel_unless_tolerated_and_prefer_no_schedule_only_lowers_preference() {
        let mut tainted = gpu_node("a", "b1", "r1", 8, 4);
        tainted.taints.push(Taint {
            key: "gpu".into(),
            value: String::new(),
            effect: Effect::NoSchedule,
        });
        let mut soft = gpu_node("b", "b1", "r1", 8, 6);
        soft.taints.push(Taint {
            key: "x".into(),
            value: String::new(),
            effect: Effect::PreferNoSchedule,
        });
        let mut state = cluster(vec![tainted, soft, gpu_node("c", "b1", "r1", 8, 0)]);
        // b is fuller but softly tainted, a is repelled: c wins.
        let outcome = state.place(&gang(Mode::Unconstrained, None, vec![gpu_task("w", 1, 1)]));
        assert_eq!(nodes_of(&outcome), [("c", 1)]);
        let mut task = gpu_task("w", 1, 1);
        task.tolerations.push(crate::model::Toleration {
            key: String::new(),
            operator: crate::model::Operator::Exists,
            value: String::new(),
            effect: None,
        });
        let outcome = state.place(&gang(Mode::Unconstrained, None, vec![task]));
        assert_eq!(nodes_of(&outcome), [("b", 1)]);
    }

    #[test]
    fn placing_leaves_the_state_unchanged() {
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 3),
            gpu_node("b", "b1", "r2", 8, 0),
        ]);
        let before = state.used();
        let _ = state.place(&gang(Mode::Unconstrained, None, vec![gpu_task("w", 9, 1)]));
        let _ = state.place(&gang(Mode::Required, Some(1), vec![gpu_task("w", 99, 1)]));
        assert_eq!(state.used(), before);
    }

    #[test]
    fn task_level_constraints_place_tasks_in_turn() {
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 0),
            gpu_node("b", "b1", "r2", 8, 0),
            gpu_node("c", "b1", "r2", 8, 0),
        ]);
        let mut workers = gpu_task("worker", 16, 1);
        workers.topology = Some(Topology {
            mode: Mode::Required,
            level: Some(1),
        });
        let outcome = state.place(&gang(
            Mode::Unconstrained,
            None,
            vec![gpu_task("master", 1, 8), workers],
        ));
        assert_eq!(outcome.status, Status::Placed);
        let placed: Vec<(usize, &str, u64)> = outcome
            .assignments
            .iter()
            .map(|(t, n, c)| (*t, n.as_str(), *c))
            .collect();
        assert_eq!(placed, [(0, "a", 1), (1, "b", 8), (1, "c", 8)]);
    }

    #[test]
    fn the_pods_resource_limits_pod_count() {
        let mut node = gpu_node("a", "b1", "r1", 8, 0);
        node.allocatable[1].1 = 2000;
        let mut state = cluster(vec![node]);
        let outcome = state.place(&gang(Mode::Unconstrained, None, vec![gpu_task("w", 3, 0)]));
        assert_eq!(
            outcome.reason.as_deref(),
            Some("unconstrained: the cluster fits 2 of 3 w pods")
        );
    }
}

#[cfg(test)]
mod policy_tests {
    use super::*;
    use crate::testing::{cluster, gang, gpu_node, gpu_task};

    #[test]
    fn every_policy_takes_the_fullest_node_that_holds_a_small_gang() {
        // Free GPUs: a 4, b 5, c 8. Four pods fit a, b and c alone; a is the tightest fit, the
        // smallest free share and the highest utilisation after placing.
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 4),
            gpu_node("b", "b1", "r2", 8, 3),
            gpu_node("c", "b1", "r2", 8, 0),
        ]);
        let four = gang(Mode::Unconstrained, None, vec![gpu_task("w", 4, 1)]);
        for policy in [
            Policy::BestFit,
            Policy::LeastFree,
            Policy::Binpack,
            Policy::KeepWhole,
        ] {
            let outcome = state.place_with(&four, policy);
            let nodes: Vec<&str> = outcome
                .assignments
                .iter()
                .map(|(_, n, _)| n.as_str())
                .collect();
            assert_eq!(nodes, ["a"], "{policy:?}");
        }
    }

    #[test]
    fn policies_differ_on_domains() {
        // Nine pods need a rack. r1 has free 5 + 5 (capacity 10, share 10/16); r2 has free
        // 8 + 2 + 0 (capacity 10, share 10/24). Best fit ties on capacity and takes r1 by name;
        // least-free takes r2, whose free share is smaller.
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 3),
            gpu_node("b", "b1", "r1", 8, 3),
            gpu_node("c", "b1", "r2", 8, 0),
            gpu_node("d", "b1", "r2", 8, 6),
            gpu_node("e", "b1", "r2", 8, 8),
        ]);
        let nine = gang(Mode::Required, Some(1), vec![gpu_task("w", 9, 1)]);
        assert_eq!(
            state.place_with(&nine, Policy::BestFit).domain,
            ["b1", "r1"]
        );
        assert_eq!(
            state.place_with(&nine, Policy::LeastFree).domain,
            ["b1", "r2"]
        );
        assert_eq!(
            state.place_with(&nine, Policy::Binpack).domain,
            ["b1", "r1"]
        );
    }

    #[test]
    fn keep_whole_leaves_the_free_rack_whole() {
        // r1 is wholly free; r2 has a node in use. One 8-GPU pod: best fit takes r1's first
        // node (equal capacity, first path); keep-whole takes r2's free node.
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 0),
            gpu_node("b", "b1", "r1", 8, 0),
            gpu_node("c", "b1", "r2", 8, 8),
            gpu_node("d", "b1", "r2", 8, 0),
        ]);
        let one = gang(Mode::Unconstrained, None, vec![gpu_task("w", 1, 8)]);
        let node = |outcome: Outcome| outcome.assignments[0].1.clone();
        assert_eq!(node(state.place_with(&one, Policy::BestFit)), "a");
        assert_eq!(node(state.place_with(&one, Policy::KeepWhole)), "d");
    }

    #[test]
    fn unknown_policies_are_refused() {
        assert!(Policy::parse("tightest").is_err());
        assert_eq!(Policy::parse("binpack"), Ok(Policy::Binpack));
        assert_eq!(Policy::parse("keep-whole"), Ok(Policy::KeepWhole));
    }
}

#[cfg(test)]
mod edge_tests {
    use super::*;
    use crate::testing::{cluster, gang, gpu_node, gpu_task, BLOCK, HOST, RACK};

    #[test]
    fn loose_nodes_are_a_last_resort_for_unconstrained_pods_only() {
        let mut loose = gpu_node("loose", "b1", "r1", 8, 0);
        loose.labels.remove(RACK);
        let mut state = cluster(vec![loose, gpu_node("a", "b1", "r1", 8, 4)]);
        // Four pods fit node a: the loose node is not used.
        let four = state.place(&gang(Mode::Unconstrained, None, vec![gpu_task("w", 4, 1)]));
        assert_eq!(four.assignments, [(0, "a".to_owned(), 4)]);
        // Ten do not: a takes its 4 and the loose node the rest; no common domain.
        let ten = state.place(&gang(Mode::Unconstrained, None, vec![gpu_task("w", 10, 1)]));
        assert_eq!(
            ten.assignments,
            [(0, "a".to_owned(), 4), (0, "loose".to_owned(), 6)]
        );
        assert_eq!((ten.level, ten.domain.len()), (None, 0));
        // Preferred pods never use it.
        let preferred = state.place(&gang(Mode::Preferred, Some(1), vec![gpu_task("w", 10, 1)]));
        assert_eq!(preferred.status, Status::Unschedulable);
    }

    #[test]
    fn an_explicit_hostname_level_may_hold_several_nodes() {
        let mut state =
            ClusterState::new(vec![BLOCK.into(), RACK.into(), HOST.into()], false).expect("levels");
        for (name, host) in [("n1", "h1"), ("n2", "h1"), ("n3", "h2")] {
            let mut node = gpu_node(name, "b1", "r1", 8, 0);
            node.labels.insert(HOST.into(), host.into());
            state.add_node(node).expect("node");
        }
        let outcome = state.place(&gang(Mode::Required, Some(2), vec![gpu_task("w", 12, 1)]));
        assert_eq!(outcome.domain, ["b1", "r1", "h1"]);
        assert_eq!(
            outcome.assignments,
            [(0, "n1".to_owned(), 8), (0, "n2".to_owned(), 4)]
        );
    }

    #[test]
    fn updates_and_removals_change_later_decisions() {
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 0),
            gpu_node("b", "b1", "r2", 8, 2),
        ]);
        let six = gang(Mode::Unconstrained, None, vec![gpu_task("w", 6, 1)]);
        assert_eq!(state.place(&six).assignments[0].1, "b");
        state
            .update_node(gpu_node("b", "b1", "r2", 8, 3))
            .expect("update");
        assert_eq!(state.place(&six).assignments[0].1, "a");
        state.remove_node("a").expect("remove");
        assert_eq!(state.place(&six).status, Status::Unschedulable);
        state
            .add_node(gpu_node("a", "b1", "r1", 8, 0))
            .expect("add again");
        assert_eq!(state.place(&six).assignments[0].1, "a");
    }

    #[test]
    fn the_reason_comes_from_the_min_available_attempt() {
        let mut state = cluster(vec![gpu_node("a", "b1", "r1", 8, 0)]);
        let mut task = gpu_task("w", 20, 1);
        task.min_available = 10;
        let outcome = state.place(&gang(Mode::Required, Some(1), vec![task]));
        assert_eq!(
            outcome.reason.as_deref(),
            Some("required t.io/rack: the best rack fits 8 of 10 w pods (r1)")
        );
    }
    #[test]
    fn heterogeneous_gang_is_placed_when_task_order_would_fragment_it() {
        // 6, 8 and 4 GPUs free: the launcher first on the fullest node that holds it (c)
        // would leave room for 3 workers only; the exact search finds n1 + n2 x2 + n3.
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 2),
            gpu_node("b", "b1", "r1", 8, 0),
            gpu_node("c", "b1", "r1", 8, 4),
        ]);
        let outcome = state.place(&gang(
            Mode::Required,
            Some(1),
            vec![gpu_task("launcher", 1, 2), gpu_task("worker", 4, 4)],
        ));
        assert_eq!(outcome.status, Status::Placed, "{:?}", outcome.reason);
        let placed: Vec<(usize, &str, u64)> = outcome
            .assignments
            .iter()
            .map(|(t, n, c)| (*t, n.as_str(), *c))
            .collect();
        assert_eq!(placed, [(0, "a", 1), (1, "a", 1), (1, "b", 2), (1, "c", 1)]);
        assert_eq!(outcome.level, Some(1));
    }

    #[test]
    fn task_level_constraints_stay_inside_the_gang_domain() {
        // Alone, the master's best rack is r3 in block b2, where the workers do not fit; the
        // gang is required at the block level, so both go to block b1.
        let mut state = cluster(vec![
            gpu_node("a", "b1", "r1", 8, 0),
            gpu_node("a2", "b1", "r1", 8, 0),
            gpu_node("b", "b1", "r2", 8, 0),
            gpu_node("c", "b1", "r2", 8, 0),
            gpu_node("d", "b2", "r3", 8, 0),
        ]);
        let rack = Some(Topology {
            mode: Mode::Required,
            level: Some(1),
        });
        let mut master = gpu_task("master", 1, 8);
        master.topology = rack;
        let mut workers = gpu_task("worker", 2, 8);
        workers.topology = rack;
        let outcome = state.place(&gang(Mode::Required, Some(0), vec![master, workers]));
        assert_eq!(outcome.status, Status::Placed, "{:?}", outcome.reason);
        assert_eq!(outcome.domain, ["b1"]);
        let nodes: Vec<&str> = outcome
            .assignments
            .iter()
            .map(|(_, n, _)| n.as_str())
            .collect();
        assert_eq!(nodes, ["a", "b", "c"]);
    }

    #[test]
    fn an_exhausted_search_budget_is_its_own_reason() {
        // 2-GPU and 3-GPU pods on 4-GPU nodes: a node takes two small pods or one large one.
        // 20 small + 21 large pods need 31 nodes of the 30; every bound passes. The nodes differ
        // in a resource nobody asks for, so none is a twin of another, and the ways to spread
        // the large pods are far more than the budget.
        let nodes = (0..30)
            .map(|i| {
                let mut node = gpu_node(&format!("n{i:02}"), "b1", "r1", 4, 0);
                node.allocatable
                    .push(("example.com/disk".into(), (i + 1) * 1000));
                node
            })
            .collect();
        let mut state = cluster(nodes);
        let outcome = state.place(&gang(
            Mode::Required,
            Some(1),
            vec![gpu_task("small", 20, 2), gpu_task("large", 21, 3)],
        ));
        assert_eq!(outcome.status, Status::Unschedulable);
        let reason = outcome.reason.unwrap_or_default();
        assert!(reason.starts_with("search budget exhausted"), "{reason}");
    }

    #[test]
    fn a_smaller_search_budget_gives_up_sooner() {
        // 4 small + 7 large pods need 9 of these 8 distinct nodes: the default budget proves it,
        // a budget of 50 steps runs out first and says so.
        let nodes: Vec<_> = (0..8)
            .map(|i| {
                let mut node = gpu_node(&format!("n{i:02}"), "b1", "r1", 4, 0);
                node.allocatable
                    .push(("example.com/disk".into(), (i + 1) * 1000));
                node
            })
            .collect();
        let hard = gang(
            Mode::Required,
            Some(1),
            vec![gpu_task("small", 4, 2), gpu_task("large", 7, 3)],
        );
        let proved = cluster(nodes.clone()).place(&hard);
        assert!(!proved
            .reason
            .unwrap_or_default()
            .starts_with("search budget"));
        let mut state = cluster(nodes);
        assert!(state.set_search_budget(0).is_err());
        state.set_search_budget(50).unwrap();
        assert_eq!(
            state.place(&hard).reason.as_deref(),
            Some(
                "search budget exhausted: 50 steps found neither a placement nor a proof that \
                 none exists"
            )
        );
    }

    #[test]
    fn interchangeable_nodes_are_searched_once() {
        // The same gang on 30 identical nodes: the search gives a node no more than its twin
        // before it, so it proves the gang does not fit well inside the budget.
        let nodes = (0..30)
            .map(|i| gpu_node(&format!("n{i:02}"), "b1", "r1", 4, 0))
            .collect();
        let mut state = cluster(nodes);
        let outcome = state.place(&gang(
            Mode::Required,
            Some(1),
            vec![gpu_task("small", 20, 2), gpu_task("large", 21, 3)],
        ));
        assert_eq!(outcome.status, Status::Unschedulable);
        assert_eq!(
            outcome.reason.as_deref(),
            Some("required t.io/rack: no rack holds 20 small pods and 21 large pods together")
        );
    }
}
