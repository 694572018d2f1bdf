//! Capacities of recently placed request shapes, kept current incrementally.
//!
//! Computing a task's capacities visits every node of the cluster. A scheduler places the same
//! few request shapes again and again while only a handful of nodes change in between (the
//! pods it bound, the pods that finished), so the state keeps the capacities of its last few
//! shapes and a log of the nodes whose usage changed. A lookup replays the log since the entry
//! was last brought up to date: each changed node's fit is recomputed and the difference is
//! carried up its chain of domains, O(depth) per node. Anything that changes the tree or a
//! node's labels, taints or flags starts a new epoch, which drops every entry.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::capacity::{node_fit, Ask, Capacities};
use crate::model::Policy;
use crate::state::ClusterState;

/// Request shapes remembered at once.
const ENTRIES: usize = 8;
/// Usage changes logged before the log is dropped (and with it every entry).
const LOG_LIMIT: usize = 1 << 16;

/// The cached capacities of one request shape.
#[derive(Debug)]
struct Entry {
    key: String,
    epoch: u64,
    version: u64,
    caps: Arc<Capacities>,
}

/// The cache and its change log, owned by a [`ClusterState`].
#[derive(Debug, Default)]
pub(crate) struct FitCache {
    entries: Mutex<Vec<Entry>>,
    /// Bumped on every usage change of a node.
    version: u64,
    /// Bumped when the tree, a node's spec or the log's reach changes.
    epoch: u64,
    /// `changed[i]` is the node whose usage change made version `base + i + 1`.
    changed: Vec<usize>,
    base: u64,
}

impl Clone for FitCache {
    /// A copy starts empty: entries are only a shortcut.
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl FitCache {
    /// Records that node `id`'s usage changed.
    pub(crate) fn touch(&mut self, id: usize) {
        self.version += 1;
        self.changed.push(id);
        if self.changed.len() > LOG_LIMIT {
            self.reset();
        }
    }

    /// Drops every entry: the tree or a node's spec changed.
    pub(crate) fn reset(&mut self) {
        self.epoch += 1;
        self.changed.clear();
        self.base = self.version;
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Entry>> {
        // The entries are a shortcut: a poisoned lock is cleared, not propagated.
        self.entries.lock().unwrap_or_else(|poisoned| {
            let mut guard = poisoned.into_inner();
            guard.clear();
            guard
        })
    }
}

/// What a task's capacities depend on besides the state: its requests, filters and slices.
fn key(ask: &Ask<'_>) -> String {
    format!(
        "{:?}|{:?}|{:?}|{}|{}|{}",
        ask.requests, ask.task.node_selector, ask.task.tolerations, ask.k, ask.s, ask.loose_ok
    )
}

impl Capacities {
    /// The task's capacities over the whole cluster, from the cache when it has them (only
    /// for the best-fit policy: the other policies rank by usage sums the cache does not keep).
    pub(crate) fn cached(state: &ClusterState, ask: &Ask<'_>) -> Arc<Self> {
        if ask.policy != Policy::BestFit {
            return Arc::new(Self::of_cluster(state, ask, true));
        }
        let cache = &state.fit_cache;
        let key = key(ask);
        let mut entries = cache.lock();
        if let Some(at) = entries.iter().position(|e| e.key == key) {
            let entry = &mut entries[at];
            if entry.epoch == cache.epoch {
                if entry.version != cache.version {
                    let start = usize::try_from(entry.version - cache.base).unwrap_or(0);
                    let mut dirty = cache.changed[start..].to_vec();
                    dirty.sort_unstable();
                    dirty.dedup();
                    let caps = Arc::make_mut(&mut entry.caps);
                    for node in dirty {
                        caps.refresh_node(state, node, ask);
                    }
                    entry.version = cache.version;
                }
                return Arc::clone(&entry.caps);
            }
            entries.remove(at);
        }
        if entries.len() >= ENTRIES {
            entries.remove(0);
        }
        let caps = Arc::new(Self::of_cluster(state, ask, false));
        entries.push(Entry {
            key,
            epoch: cache.epoch,
            version: cache.version,
            caps: Arc::clone(&caps),
        });
        caps
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
