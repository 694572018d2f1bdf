//! The placer's input and output records, already validated by the caller.
//!
//! Quantities are integer milli-units and levels are indexes into the cluster's effective levels
//! (the snapshot's levels plus the implicit per-node level). The Python face checks the contract
//! (field paths, quantities, known levels) and hands over these records; the core still refuses
//! inconsistent ones with [`PlacerError`] instead of panicking.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::{Deref, DerefMut};

#[cfg(feature = "python")]
use pyo3::pyclass;

/// The resource that counts pods; a placed pod takes one unit of it.
pub const PODS: &str = "pods";
/// One pod in milli-units of [`PODS`].
pub const POD: i64 = 1000;
/// The fit of a node that no request limits (all-zero requests and no `pods` resource).
pub const UNLIMITED: u64 = 1 << 40;
/// Steps (node visits) the exact search of one gang attempt may take before it gives up; the
/// attempt then fails with its own reason, never with "does not fit". The state carries the
/// budget (`ClusterState::set_search_budget`), the search spends it.
pub const SEARCH_BUDGET: u64 = 200_000;

/// Placed pods as `assume` and `release` take them: `(node name, per-pod requests, count)`.
pub type PlacedPods = (String, Vec<(String, i64)>, u64);

/// Every node's usage: `(node name, [(resource, milli-units)])`, zero amounts left out.
pub type Usage = Vec<(String, Vec<(String, i64)>)>;

/// Amounts by resource name in milli-units, in the order given (Python sees a dict).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Amounts(pub Vec<(String, i64)>);

impl Deref for Amounts {
    type Target = Vec<(String, i64)>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for Amounts {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<'a> IntoIterator for &'a Amounts {
    type Item = &'a (String, i64);
    type IntoIter = std::slice::Iter<'a, (String, i64)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl From<Vec<(String, i64)>> for Amounts {
    fn from(amounts: Vec<(String, i64)>) -> Self {
        Self(amounts)
    }
}

/// A refusal from the core; the message names what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacerError(pub String);

impl fmt::Display for PlacerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlacerError {}

/// A taint effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Repels pods that do not tolerate it.
    NoSchedule,
    /// Only lowers preference.
    PreferNoSchedule,
    /// Repels pods that do not tolerate it.
    NoExecute,
}

impl Effect {
    /// The Kubernetes spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoSchedule => "NoSchedule",
            Self::PreferNoSchedule => "PreferNoSchedule",
            Self::NoExecute => "NoExecute",
        }
    }

    /// Parses the Kubernetes spelling.
    pub fn parse(text: &str) -> Result<Self, PlacerError> {
        match text {
            "NoSchedule" => Ok(Self::NoSchedule),
            "PreferNoSchedule" => Ok(Self::PreferNoSchedule),
            "NoExecute" => Ok(Self::NoExecute),
            other => Err(PlacerError(format!("unknown taint effect {other:?}"))),
        }
    }
}

// The records below are the Python binding's records too (`crdkit._placer.Taint` and so on):
// with the `python` feature each is a frozen class whose attributes are these fields, read by
// `get_all`. The binding's `records` module adds their checked constructors and the
// conversions of the enums (their contract spellings) and of `Amounts` (a dict).

/// A node taint.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    feature = "python",
    pyclass(module = "crdkit._placer", name = "Taint", frozen, get_all)
)]
pub struct Taint {
    /// Taint key.
    pub key: String,
    /// Taint value.
    pub value: String,
    /// Taint effect.
    pub effect: Effect,
}

/// How a toleration compares values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// Key and value must match.
    Equal,
    /// The key must match (an empty key matches every key).
    Exists,
}

impl Operator {
    /// The Kubernetes spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Equal => "Equal",
            Self::Exists => "Exists",
        }
    }
}

/// A pod toleration.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "python",
    pyclass(module = "crdkit._placer", name = "Toleration", frozen, get_all, eq, hash)
)]
pub struct Toleration {
    /// Key to match; empty with `Exists` matches every taint.
    pub key: String,
    /// Comparison.
    pub operator: Operator,
    /// Value for `Equal`.
    pub value: String,
    /// Effect to match; `None` matches every effect.
    pub effect: Option<Effect>,
}

impl Toleration {
    /// Kubernetes' rule: does this toleration cover `taint`?
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.is_some_and(|effect| effect != taint.effect) {
            return false;
        }
        match self.operator {
            Operator::Exists => self.key.is_empty() || self.key == taint.key,
            Operator::Equal => self.key == taint.key && self.value == taint.value,
        }
    }
}

/// One node of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    feature = "python",
    pyclass(module = "crdkit._placer", name = "Node", frozen, get_all)
)]
pub struct NodeSpec {
    /// Unique node name.
    pub name: String,
    /// Node labels; the topology levels are read from them.
    pub labels: HashMap<String, String>,
    /// Allocatable resources in milli-units.
    pub allocatable: Amounts,
    /// Resources already used, in milli-units.
    pub used: Amounts,
    /// Taints.
    pub taints: Vec<Taint>,
    /// Cordoned nodes take no new pods.
    pub unschedulable: bool,
    /// Nodes that are not ready take no new pods.
    pub ready: bool,
}

/// A topology constraint mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// All pods in one domain of the level (or lower).
    Required,
    /// Start at the level and climb when nothing fits; spread at the top.
    Preferred,
    /// Anywhere, as compact as possible.
    Unconstrained,
}

impl Mode {
    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::Preferred => "preferred",
            Self::Unconstrained => "unconstrained",
        }
    }

    /// Parses the contract's spelling.
    pub fn parse(text: &str) -> Result<Self, PlacerError> {
        match text {
            "required" => Ok(Self::Required),
            "preferred" => Ok(Self::Preferred),
            "unconstrained" => Ok(Self::Unconstrained),
            other => Err(PlacerError(format!("unknown topology mode {other:?}"))),
        }
    }
}

/// A topology constraint: a mode and, unless unconstrained, a level index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "python",
    pyclass(module = "crdkit._placer", name = "Topology", frozen, get_all, eq, hash)
)]
pub struct Topology {
    /// The mode.
    pub mode: Mode,
    /// Index into the effective levels; `None` only for `Unconstrained`.
    pub level: Option<usize>,
}

impl Topology {
    /// No constraint.
    pub const UNCONSTRAINED: Self = Self {
        mode: Mode::Unconstrained,
        level: None,
    };
}

/// Pods in groups of `size`, each group inside one domain of the level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "python",
    pyclass(module = "crdkit._placer", name = "Slice", frozen, get_all, eq, hash)
)]
pub struct Slice {
    /// Index into the effective levels.
    pub level: usize,
    /// Pods in a group.
    pub size: u64,
}

/// A set of identical pods.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "python",
    pyclass(module = "crdkit._placer", name = "Task", frozen, get_all, eq, hash)
)]
pub struct TaskSpec {
    /// Task name, unique in the gang.
    pub name: String,
    /// Pods wanted.
    pub replicas: u64,
    /// Fewest pods the task can start with (1..=replicas).
    pub min_available: u64,
    /// Per-pod requests in milli-units.
    pub requests: Amounts,
    /// Exact label matches a node must have.
    pub node_selector: BTreeMap<String, String>,
    /// Tolerations.
    pub tolerations: Vec<Toleration>,
    /// Pods in groups, each inside one domain of a level.
    pub slice: Option<Slice>,
    /// The task's own constraint; `None` means it is placed with the gang's group.
    pub topology: Option<Topology>,
    /// At most this many of the task's pods on one node ("one rank per node" is 1).
    pub max_per_node: Option<u64>,
    /// Nodes the task's pods must not go to, by name, sorted (names no node has are ignored).
    pub avoid_nodes: Vec<String>,
}

/// An all-or-nothing request, bound to the effective levels it was compiled against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "python",
    pyclass(module = "crdkit._placer", name = "Gang", frozen, get_all, eq, hash)
)]
pub struct GangSpec {
    /// Gang name.
    pub name: String,
    /// Orders a batch: higher first, then input order.
    pub priority: i64,
    /// Constraint on the tasks without their own topology, together.
    pub topology: Topology,
    /// Tasks, in order.
    pub tasks: Vec<TaskSpec>,
    /// At most this many of the gang's pods, of every task together, on one node.
    pub max_per_node: Option<u64>,
    /// The effective levels the level indexes refer to.
    pub levels: Vec<String>,
}

/// What "best fit" and "fullest" mean when the placer ranks domains and nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// The least capacity for this request (the default).
    #[default]
    BestFit,
    /// The least free share of the requested resources.
    LeastFree,
    /// Volcano's binpack score for nodes (weighted utilisation after placing, weights 1);
    /// domains rank as with `BestFit`.
    Binpack,
    /// Keep whole domains whole: an entry ranks first by how many wholly free domains (and
    /// nodes) placing there would break, then as with `BestFit`. A node is free for a task when
    /// none of the resources the task requests is in use on it; a domain when all its nodes are.
    KeepWhole,
}

impl Policy {
    /// Parses the contract's spelling.
    pub fn parse(text: &str) -> Result<Self, PlacerError> {
        match text {
            "best-fit" => Ok(Self::BestFit),
            "least-free" => Ok(Self::LeastFree),
            "binpack" => Ok(Self::Binpack),
            "keep-whole" => Ok(Self::KeepWhole),
            other => Err(PlacerError(format!(
                "policy: unknown policy {other:?} (one of best-fit, least-free, binpack, keep-whole)"
            ))),
        }
    }
}

/// How a gang ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every replica placed.
    Placed,
    /// Every task at its `minAvailable`.
    Minimal,
    /// Nothing placed.
    Unschedulable,
}

impl Status {
    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Placed => "placed",
            Self::Minimal => "minimal",
            Self::Unschedulable => "unschedulable",
        }
    }
}

/// The numbers behind an unschedulable reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    feature = "python",
    pyclass(module = "crdkit._placer", name = "Fit", frozen, get_all)
)]
pub struct FitReport {
    /// The best domain's value at the constraint level; `None` for the whole cluster.
    pub best_domain: Option<String>,
    /// Units that fit.
    pub fits: u64,
    /// Units wanted.
    pub wants: u64,
    /// `"pods"` or `"slices"`.
    pub unit: &'static str,
}

/// The placer's answer for one gang.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// How it ended.
    pub status: Status,
    /// `(task index, node name, pods)`, sorted by task then node, counts positive.
    pub assignments: Vec<(usize, String, u64)>,
    /// Level index of the lowest domain holding every placed pod.
    pub level: Option<usize>,
    /// That domain's label values, widest first.
    pub domain: Vec<String>,
    /// One-line reason when unschedulable.
    pub reason: Option<String>,
    /// Numbers behind the reason, where they apply.
    pub fit: Option<FitReport>,
}
