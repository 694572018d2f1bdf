//! The core of crdkit's placer: Kubernetes quantities and topology-aware gang placement.
//!
//! Everything here is plain Rust with its own tests. The Python binding layer lives in
//! [`python`] and is compiled only with the `python` feature, which maturin turns on.

pub mod batch;
mod capacity;
mod fit_cache;
pub mod model;
pub mod quantity;
mod search;
pub mod state;
#[cfg(test)]
mod testing;

pub use batch::{placement_order, BatchItem};
pub use model::{
    Effect, FitReport, GangSpec, Mode, NodeSpec, Operator, Outcome, PlacerError, Policy, Status,
    Taint, TaskSpec, Toleration, Topology,
};
pub use state::ClusterState;

#[cfg(feature = "python")]
mod python;
