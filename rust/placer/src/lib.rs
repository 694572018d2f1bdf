//! The core of crdkit's placer: Kubernetes quantities and topology-aware gang placement.
//!
//! Everything here is plain Rust with its own tests. The Python binding layer lives in
//! [`python`] and is compiled only with the `python` feature, which maturin turns on.

pub mod quantity;

#[cfg(feature = "python")]
mod python;
