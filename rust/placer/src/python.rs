//! PyO3 bindings: the `crdkit._placer` extension module.
//!
//! The binding layer converts types and errors, nothing more. Requests arrive as the core's own
//! records (`crate::model`'s `NodeSpec`, `GangSpec` and the rest are the Python classes, frozen,
//! compiled once by `crdkit.placer.compiler`), and answers leave as [`records::PyOutcome`]. Every entry point runs its Rust
//! work under `catch_unwind`, so a bug surfaces as a `RuntimeError` with context instead of a
//! `PanicException` that callers cannot reasonably handle.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};

use crate::batch::BatchItem;
use crate::model::{NodeSpec, PlacedPods, PlacerError, Policy};
use crate::quantity::{self, QuantityError};
use crate::state::ClusterState;

mod records;

use crate::model::{FitReport, GangSpec, Slice, Taint, TaskSpec, Toleration, Topology};
use records::{PyAssignment, PyOutcome};

/// Runs `work`, turning a panic into a `RuntimeError` that says where it happened.
pub(crate) fn guarded<T>(context: &str, work: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(payload) => {
            let detail = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(PyRuntimeError::new_err(format!(
                "internal error in {context}: {detail}"
            )))
        }
    }
}

fn quantity_error(err: QuantityError) -> PyErr {
    PyValueError::new_err(err.to_string())
}

/// Parses a Kubernetes quantity (a string, an int or a float) into exact integer milli-units.
#[pyfunction]
#[pyo3(signature = (value, *, allow_negative = false))]
fn parse_quantity(value: &Bound<'_, PyAny>, allow_negative: bool) -> PyResult<i64> {
    guarded("parse_quantity", || {
        if value.is_instance_of::<PyBool>() {
            return Err(PyTypeError::new_err(format!(
                "invalid quantity {}: expected a string or a number",
                value.repr()?
            )));
        }
        if let Ok(text) = value.cast::<PyString>() {
            return quantity::parse_milli(&text.to_cow()?, allow_negative).map_err(quantity_error);
        }
        if value.is_instance_of::<PyInt>() {
            return match value.extract::<i128>() {
                Ok(int) => {
                    quantity::milli_from_integer(int, allow_negative).map_err(quantity_error)
                }
                Err(_) => Err(quantity_error(QuantityError::OutOfRange(
                    value.str()?.to_cow()?.into_owned(),
                ))),
            };
        }
        if let Ok(float) = value.cast::<PyFloat>() {
            return quantity::milli_from_float(float.value(), allow_negative)
                .map_err(quantity_error);
        }
        Err(PyTypeError::new_err(format!(
            "invalid quantity {}: expected a string or a number",
            value.repr()?
        )))
    })
}

fn placer_error(err: PlacerError) -> PyErr {
    PyValueError::new_err(err.0)
}

/// Refuses a gang compiled against other levels than the engine's: its indexes would be wrong.
fn check_levels(gang: &GangSpec, state: &ClusterState) -> PyResult<()> {
    if gang.levels.as_slice() == state.levels() {
        return Ok(());
    }
    Err(PyValueError::new_err(format!(
        "gang: compiled for the levels [{}], not this cluster's [{}]",
        gang.levels.join(", "),
        state.levels().join(", ")
    )))
}

/// The pods of `assignments` with the per-pod requests of their tasks in `gang`.
fn placed_pods(
    gang: &GangSpec,
    assignments: &[Bound<'_, PyAssignment>],
) -> PyResult<Vec<PlacedPods>> {
    assignments
        .iter()
        .enumerate()
        .map(|(index, assignment)| {
            let a = assignment.get();
            let task = gang.task_index(&a.task).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "placement.assignments[{index}].task: requests of task \"{}\" unknown; pass the gang",
                    a.task
                ))
            })?;
            Ok((a.node.clone(), gang.tasks[task].requests.to_vec(), a.count))
        })
        .collect()
}

/// The Rust cluster state behind `crdkit.placer.Cluster`. Every call releases the GIL while the
/// core works, and takes the lock that serialises calls from several threads.
#[pyclass(module = "crdkit._placer", name = "Engine")]
struct Engine {
    state: Mutex<ClusterState>,
}

impl Engine {
    fn lock(&self) -> PyResult<MutexGuard<'_, ClusterState>> {
        self.state.lock().map_err(|_| {
            PyRuntimeError::new_err("the placer's cluster state was left inconsistent by an earlier internal error; build a new Cluster")
        })
    }

    /// Runs `work` on the state without the GIL, turning panics into `RuntimeError`.
    fn with_state<T: Send>(
        &self,
        py: Python<'_>,
        context: &str,
        work: impl FnOnce(&mut ClusterState) -> PyResult<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| guarded(context, || work(&mut *self.lock()?)))
    }
}

#[pymethods]
impl Engine {
    #[new]
    #[pyo3(signature = (levels, implicit_host, search_budget = None))]
    fn new(levels: Vec<String>, implicit_host: bool, search_budget: Option<u64>) -> PyResult<Self> {
        guarded("Engine()", || {
            let mut state = ClusterState::new(levels, implicit_host).map_err(placer_error)?;
            if let Some(steps) = search_budget {
                state.set_search_budget(steps).map_err(placer_error)?;
            }
            Ok(Self {
                state: Mutex::new(state),
            })
        })
    }

    /// The effective levels, the per-node level last.
    #[getter]
    fn levels(&self) -> PyResult<Vec<String>> {
        Ok(self.lock()?.levels().to_vec())
    }

    fn add_node(&self, py: Python<'_>, node: Bound<'_, NodeSpec>) -> PyResult<()> {
        let spec = node.get().clone();
        self.with_state(py, "Cluster.add_node", |s| {
            s.add_node(spec).map_err(placer_error)
        })
    }

    fn add_nodes(&self, py: Python<'_>, nodes: Vec<Bound<'_, NodeSpec>>) -> PyResult<()> {
        let specs: Vec<NodeSpec> = nodes.iter().map(|n| n.get().clone()).collect();
        self.with_state(py, "Cluster.add_nodes", |s| {
            for spec in specs {
                s.add_node(spec).map_err(placer_error)?;
            }
            Ok(())
        })
    }

    #[pyo3(signature = (node, keep_used = false))]
    fn update_node(
        &self,
        py: Python<'_>,
        node: Bound<'_, NodeSpec>,
        keep_used: bool,
    ) -> PyResult<()> {
        let spec = node.get().clone();
        self.with_state(py, "Cluster.update_node", |s| {
            if keep_used {
                s.update_node_keeping_usage(spec).map_err(placer_error)
            } else {
                s.update_node(spec).map_err(placer_error)
            }
        })
    }

    /// Adds the usage of pods already on nodes: `(node, per-pod requests in milli-units,
    /// count)` items, all or nothing (what a mirror of a live cluster calls per pod event).
    fn add_pods(&self, py: Python<'_>, items: Vec<PlacedPods>) -> PyResult<()> {
        self.with_state(py, "Cluster.add_pods", |s| {
            s.assume(&items).map_err(placer_error)
        })
    }

    /// Removes the usage of pods that are gone; all or nothing, never below zero.
    fn remove_pods(&self, py: Python<'_>, items: Vec<PlacedPods>) -> PyResult<()> {
        self.with_state(py, "Cluster.remove_pods", |s| {
            s.release(&items).map_err(placer_error)
        })
    }

    /// One node's usage in milli-units, zero amounts left out; `None` for an unknown node.
    fn node_used<'py>(
        &self,
        py: Python<'py>,
        name: String,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let usage = self.with_state(py, "Cluster.node_used", |s| Ok(s.node_used(&name)))?;
        let Some(amounts) = usage else {
            return Ok(None);
        };
        let result = PyDict::new(py);
        for (resource, milli) in amounts {
            result.set_item(resource, milli)?;
        }
        Ok(Some(result))
    }

    fn remove_node(&self, py: Python<'_>, name: String) -> PyResult<()> {
        self.with_state(py, "Cluster.remove_node", |s| {
            s.remove_node(&name).map_err(placer_error)
        })
    }

    #[pyo3(signature = (gang, policy = "best-fit"))]
    fn place(
        &self,
        py: Python<'_>,
        gang: Bound<'_, GangSpec>,
        policy: &str,
    ) -> PyResult<PyOutcome> {
        let policy = Policy::parse(policy).map_err(placer_error)?;
        let request = gang.get();
        let outcome = self.with_state(py, "Cluster.place", |s| {
            check_levels(request, s)?;
            Ok(s.place_with(request, policy))
        })?;
        guarded("Cluster.place", || {
            Ok(PyOutcome::resolve(gang.unbind(), outcome))
        })
    }

    /// Places a batch in Rust: higher `priority` first, then input order, each gang seeing the
    /// pods of the ones before it; the state is unchanged afterwards. Outcomes come in
    /// placement order.
    #[pyo3(signature = (gangs, policy = "best-fit"))]
    fn place_all(
        &self,
        py: Python<'_>,
        gangs: Vec<Bound<'_, GangSpec>>,
        policy: &str,
    ) -> PyResult<Vec<PyOutcome>> {
        let policy = Policy::parse(policy).map_err(placer_error)?;
        let requests: Vec<&GangSpec> = gangs.iter().map(|g| g.get()).collect();
        let results = self.with_state(py, "Cluster.place_all", |s| {
            for request in &requests {
                check_levels(request, s)?;
            }
            let batch: Vec<BatchItem<'_>> = requests
                .iter()
                .map(|r| BatchItem {
                    gang: r,
                    priority: r.priority,
                })
                .collect();
            s.place_all(&batch, policy).map_err(placer_error)
        })?;
        guarded("Cluster.place_all", || {
            Ok(results
                .into_iter()
                .map(|(index, outcome)| PyOutcome::resolve(gangs[index].clone().unbind(), outcome))
                .collect())
        })
    }

    fn assume(
        &self,
        py: Python<'_>,
        gang: Bound<'_, GangSpec>,
        assignments: Vec<Bound<'_, PyAssignment>>,
    ) -> PyResult<()> {
        let placed = placed_pods(gang.get(), &assignments)?;
        self.with_state(py, "Cluster.assume", |s| {
            s.assume(&placed).map_err(placer_error)
        })
    }

    fn release(
        &self,
        py: Python<'_>,
        gang: Bound<'_, GangSpec>,
        assignments: Vec<Bound<'_, PyAssignment>>,
    ) -> PyResult<()> {
        let placed = placed_pods(gang.get(), &assignments)?;
        self.with_state(py, "Cluster.release", |s| {
            s.release(&placed).map_err(placer_error)
        })
    }

    /// Every node's usage in milli-units, zero amounts left out, sorted by node and resource.
    fn used<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let usage = self.with_state(py, "Cluster.used", |s| Ok(s.used()))?;
        let result = PyDict::new(py);
        for (node, amounts) in usage {
            let inner = PyDict::new(py);
            for (resource, milli) in amounts {
                inner.set_item(resource, milli)?;
            }
            result.set_item(node, inner)?;
        }
        Ok(result)
    }

    fn rebuild_aggregates(&self, py: Python<'_>) -> PyResult<()> {
        self.with_state(py, "Cluster.rebuild_aggregates", |s| {
            s.rebuild_aggregates();
            Ok(())
        })
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.lock()?.node_count())
    }

    /// Raises a Rust panic inside the guard, so tests can see it arrive as `RuntimeError`.
    fn _panic_for_test(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            guarded("Engine._panic_for_test", || -> PyResult<()> {
                panic!("deliberate test panic")
            })
        })
    }
}

/// The `crdkit._placer` module.
#[pymodule]
fn _placer(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_class::<Engine>()?;
    m.add_class::<Taint>()?;
    m.add_class::<NodeSpec>()?;
    m.add_class::<Topology>()?;
    m.add_class::<Slice>()?;
    m.add_class::<Toleration>()?;
    m.add_class::<TaskSpec>()?;
    m.add_class::<GangSpec>()?;
    m.add_class::<PyAssignment>()?;
    m.add_class::<FitReport>()?;
    m.add_class::<PyOutcome>()?;
    m.add("MAX_SIGNIFICANT_DIGITS", quantity::MAX_SIGNIFICANT_DIGITS)?;
    Ok(())
}
