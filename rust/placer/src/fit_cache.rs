//! Capacities of recently placed request shapes, kept current incrementally.
//!
//! Computing a task's capacities visits every node of the cluster. A scheduler places the same
//! few request shapes again and again while only a handful of nodes change in between (the
//! pods it bound, the pods that finished), so the state keeps the capacities of its last few
//! shapes and a log of the nodes whose usage changed. A lookup replays the log since the entry
//! was last brought up to date: each changed node's fit is recomputed and the difference is
//! carried up its chain of domains, O(depth) per node. Anything that changes the tree or a
//! node's labels, taints or flags starts a new epoch, which drops every entry.
//!
//! This module holds data only and imports nothing from the crate: the state owns the cache,
//! and `capacity` computes what goes in it (`Capacities::cached`), so the state does not
//! depend on the search's arithmetic.

use std::sync::{Arc, Mutex, MutexGuard};

/// Request shapes remembered at once.
const ENTRIES: usize = 8;
/// Usage changes logged before the log is dropped (and with it every entry).
const LOG_LIMIT: usize = 1 << 16;

/// Capacities of one task, indexed by domain id and node id.
#[derive(Debug, Clone)]
pub(crate) struct Capacities {
    pub(crate) pods: Vec<u64>,
    pub(crate) units: Vec<u64>,
    pub(crate) fit: Vec<u64>,
    pub(crate) penalty: Vec<u8>,
    pub(crate) loose: Vec<(usize, u64)>,
    /// Policy ranks (less is better) of domains and nodes, for `LeastFree` and `Binpack`.
    pub(crate) domain_rank: Vec<i64>,
    pub(crate) node_rank: Vec<i64>,
}

/// The cached capacities of one request shape.
#[derive(Debug)]
struct Entry {
    key: String,
    epoch: u64,
    version: u64,
    caps: Arc<Capacities>,
}

/// The cache and its change log, owned by the cluster state.
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

    /// The capacities of the shape named `key`. A current entry is returned as it is; one of
    /// this epoch is first brought up to date by `refresh`, given the nodes changed since (each
    /// once, in id order); otherwise `build` makes a new entry, evicting the oldest.
    pub(crate) fn lookup(
        &self,
        key: String,
        mut refresh: impl FnMut(&mut Capacities, usize),
        build: impl FnOnce() -> Capacities,
    ) -> Arc<Capacities> {
        let mut entries = self.lock();
        if let Some(at) = entries.iter().position(|e| e.key == key) {
            let entry = &mut entries[at];
            if entry.epoch == self.epoch {
                if entry.version != self.version {
                    let start = usize::try_from(entry.version - self.base).unwrap_or(0);
                    let mut dirty = self.changed[start..].to_vec();
                    dirty.sort_unstable();
                    dirty.dedup();
                    let caps = Arc::make_mut(&mut entry.caps);
                    for node in dirty {
                        refresh(caps, node);
                    }
                    entry.version = self.version;
                }
                return Arc::clone(&entry.caps);
            }
            entries.remove(at);
        }
        if entries.len() >= ENTRIES {
            entries.remove(0);
        }
        let caps = Arc::new(build());
        entries.push(Entry {
            key,
            epoch: self.epoch,
            version: self.version,
            caps: Arc::clone(&caps),
        });
        caps
    }
}
