//! PyO3 bindings: the `crdkit._placer` extension module.
//!
//! The binding layer converts types and errors, nothing more. Every entry point runs its Rust
//! work under `catch_unwind`, so a bug surfaces as a `RuntimeError` with context instead of a
//! `PanicException` that callers cannot reasonably handle.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};

use crate::model::{
    Effect, GangSpec, Mode, NodeSpec, Operator, Outcome, PlacedPods, PlacerError, Policy, Taint,
    TaskSpec, Toleration, Topology, Usage,
};
use crate::quantity::{self, QuantityError};
use crate::state::ClusterState;

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

/// A dict of resource name to milli-units, in the dict's order.
fn amounts(dict: &Bound<'_, PyDict>) -> PyResult<Vec<(String, i64)>> {
    dict.iter()
        .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<i64>()?)))
        .collect()
}

type NodeTuple<'py> = (
    String,
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Vec<(String, String, String)>,
    bool,
    bool,
);
type TopologyTuple = (String, Option<usize>);
type TaskTuple<'py> = (
    String,
    u64,
    u64,
    Bound<'py, PyDict>,
    Vec<(String, String)>,
    Vec<(String, String, String, Option<String>)>,
    Option<(usize, u64)>,
    Option<TopologyTuple>,
);
type Items<'py> = Vec<(String, Bound<'py, PyDict>, u64)>;

fn node_spec(node: &Bound<'_, PyAny>) -> PyResult<NodeSpec> {
    let (name, labels, allocatable, used, taints, unschedulable, ready): NodeTuple<'_> =
        node.extract()?;
    let taints = taints
        .into_iter()
        .map(|(key, value, effect)| {
            Ok(Taint {
                key,
                value,
                effect: Effect::parse(&effect).map_err(placer_error)?,
            })
        })
        .collect::<PyResult<Vec<Taint>>>()?;
    Ok(NodeSpec {
        name,
        labels: labels.extract()?,
        allocatable: amounts(&allocatable)?,
        used: amounts(&used)?,
        taints,
        unschedulable,
        ready,
    })
}

fn topology((mode, level): TopologyTuple) -> PyResult<Topology> {
    Ok(Topology {
        mode: Mode::parse(&mode).map_err(placer_error)?,
        level,
    })
}

fn task_spec(task: TaskTuple<'_>) -> PyResult<TaskSpec> {
    let (name, replicas, min_available, requests, node_selector, tolerations, slice, own) = task;
    let tolerations = tolerations
        .into_iter()
        .map(|(key, operator, value, effect)| {
            let operator = match operator.as_str() {
                "Exists" => Operator::Exists,
                "Equal" => Operator::Equal,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "unknown toleration operator {other:?}"
                    )))
                }
            };
            let effect = effect
                .map(|e| Effect::parse(&e))
                .transpose()
                .map_err(placer_error)?;
            Ok(Toleration {
                key,
                operator,
                value,
                effect,
            })
        })
        .collect::<PyResult<Vec<Toleration>>>()?;
    Ok(TaskSpec {
        name,
        replicas,
        min_available,
        requests: amounts(&requests)?,
        node_selector,
        tolerations,
        slice,
        topology: own.map(topology).transpose()?,
    })
}

fn gang_spec(gang: &Bound<'_, PyAny>) -> PyResult<GangSpec> {
    let (name, gang_topology, tasks): (String, TopologyTuple, Vec<TaskTuple<'_>>) =
        gang.extract()?;
    Ok(GangSpec {
        name,
        topology: topology(gang_topology)?,
        tasks: tasks
            .into_iter()
            .map(task_spec)
            .collect::<PyResult<Vec<TaskSpec>>>()?,
    })
}

fn items(raw: Items<'_>) -> PyResult<Vec<PlacedPods>> {
    raw.into_iter()
        .map(|(node, requests, count)| Ok((node, amounts(&requests)?, count)))
        .collect()
}

type OutcomeTuple = (
    &'static str,
    Vec<(usize, String, u64)>,
    Option<usize>,
    Vec<String>,
    Option<String>,
    Option<(Option<String>, u64, u64, &'static str)>,
);

fn outcome_tuple(outcome: Outcome) -> OutcomeTuple {
    (
        outcome.status.as_str(),
        outcome.assignments,
        outcome.level,
        outcome.domain,
        outcome.reason,
        outcome
            .fit
            .map(|f| (f.best_domain, f.fits, f.wants, f.unit)),
    )
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
    fn new(levels: Vec<String>, implicit_host: bool) -> PyResult<Self> {
        guarded("Engine()", || {
            Ok(Self {
                state: Mutex::new(ClusterState::new(levels, implicit_host).map_err(placer_error)?),
            })
        })
    }

    fn add_node(&self, py: Python<'_>, node: &Bound<'_, PyAny>) -> PyResult<()> {
        let spec = node_spec(node)?;
        self.with_state(py, "Cluster.add_node", |s| {
            s.add_node(spec).map_err(placer_error)
        })
    }

    fn add_nodes(&self, py: Python<'_>, nodes: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        let specs = nodes
            .iter()
            .map(node_spec)
            .collect::<PyResult<Vec<NodeSpec>>>()?;
        self.with_state(py, "Cluster.add_nodes", |s| {
            for spec in specs {
                s.add_node(spec).map_err(placer_error)?;
            }
            Ok(())
        })
    }

    fn update_node(&self, py: Python<'_>, node: &Bound<'_, PyAny>) -> PyResult<()> {
        let spec = node_spec(node)?;
        self.with_state(py, "Cluster.update_node", |s| {
            s.update_node(spec).map_err(placer_error)
        })
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
        gang: &Bound<'_, PyAny>,
        policy: &str,
    ) -> PyResult<OutcomeTuple> {
        let spec = gang_spec(gang)?;
        let policy = Policy::parse(policy).map_err(placer_error)?;
        self.with_state(py, "Cluster.place", |s| {
            Ok(outcome_tuple(s.place_with(&spec, policy)))
        })
    }

    fn assume(&self, py: Python<'_>, placed: Items<'_>) -> PyResult<()> {
        let placed = items(placed)?;
        self.with_state(py, "Cluster.assume", |s| {
            s.assume(&placed).map_err(placer_error)
        })
    }

    fn release(&self, py: Python<'_>, placed: Items<'_>) -> PyResult<()> {
        let placed = items(placed)?;
        self.with_state(py, "Cluster.release", |s| {
            s.release(&placed).map_err(placer_error)
        })
    }

    fn used(&self, py: Python<'_>) -> PyResult<Usage> {
        self.with_state(py, "Cluster.used", |s| Ok(s.used()))
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
    m.add("MAX_SIGNIFICANT_DIGITS", quantity::MAX_SIGNIFICANT_DIGITS)?;
    Ok(())
}
