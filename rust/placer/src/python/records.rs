//! The Python face of the placer's records.
//!
//! The records themselves are declared once, in [`crate::model`]: with the `python` feature each
//! is a frozen class whose attributes are its fields (`get_all`). This module adds what the
//! declaration cannot say: the checked constructors (`crdkit.placer.compiler` validates a request
//! once, with field paths, and builds these; the constructors still refuse records the core could
//! not use, with a `ValueError`), pickling through those constructors, `repr`, the conversions of
//! the enums to their contract spellings and of [`Amounts`] to a dict, and the answer,
//! [`PyOutcome`]. Every record is frozen: what was compiled is what is placed.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

use crate::model::{
    Amounts, Effect, FitReport, GangSpec, Mode, NodeSpec, Operator, Slice, Status, Taint, TaskSpec,
    Toleration, Topology,
};

fn value_error(message: String) -> PyErr {
    PyValueError::new_err(message)
}

/// The enums read as their contract spellings.
macro_rules! spelled {
    ($($kind:ty),*) => {$(
        impl<'py> IntoPyObject<'py> for &$kind {
            type Target = PyString;
            type Output = Bound<'py, PyString>;
            type Error = Infallible;

            fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
                Ok(PyString::intern(py, self.as_str()))
            }
        }
    )*};
}

spelled!(Effect, Operator, Mode);

impl<'py> IntoPyObject<'py> for &Amounts {
    type Target = PyDict;
    type Output = Bound<'py, PyDict>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
        let dict = PyDict::new(py);
        for (name, milli) in self.iter() {
            dict.set_item(name, milli)?;
        }
        Ok(dict)
    }
}

/// A dict of name to milli-units, in the dict's order; amounts must not be negative.
fn amounts(dict: &Bound<'_, PyDict>, what: &str) -> PyResult<Amounts> {
    let mut result = Vec::with_capacity(dict.len());
    for (key, value) in dict.iter() {
        let name: String = key.extract()?;
        let milli: i64 = value.extract()?;
        if milli < 0 {
            return Err(value_error(format!(
                "{what}.{name}: {milli} milli-units is negative"
            )));
        }
        result.push((name, milli));
    }
    Ok(Amounts(result))
}

/// What `__reduce__` returns for a record built by keywords: `functools.partial(cls, name,
/// **keywords)` called with no arguments, so pickle rebuilds it through the checked constructor.
fn reduce_by_keywords<'py>(
    cls: Bound<'py, PyType>,
    name: &str,
    keywords: Bound<'py, PyDict>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
    let py = cls.py();
    let partial = py.import("functools")?.getattr("partial")?;
    let rebuild = partial.call((cls, name), Some(&keywords))?;
    Ok((rebuild, PyTuple::empty(py)))
}

/// `record` built again through its checked constructor, with `changes` (constructor keywords,
/// `name` among them) over the keywords it pickles with: the copy with changes of a frozen
/// record (`__replace__`, which Python 3.13's `copy.replace` calls), with no field list of its
/// own to keep.
fn replaced<'py>(
    record: &Bound<'py, PyAny>,
    changes: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let rebuild = record.call_method0("__reduce__")?.get_item(0)?;
    let keywords = rebuild.getattr("keywords")?.cast_into::<PyDict>()?.copy()?;
    let mut name = rebuild.getattr("args")?.get_item(0)?;
    if let Some(changes) = changes {
        for (key, value) in changes.iter() {
            if key.extract::<&str>()? == "name" {
                name = value;
            } else {
                keywords.set_item(key, value)?;
            }
        }
    }
    rebuild.getattr("func")?.call((name,), Some(&keywords))
}

#[pymethods]
impl Taint {
    #[new]
    #[pyo3(signature = (key, value, effect))]
    fn new(key: String, value: String, effect: &str) -> PyResult<Self> {
        let effect = Effect::parse(effect).map_err(|e| value_error(e.0))?;
        Ok(Self { key, value, effect })
    }

    /// Pickles through the constructor.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, PyType>, (String, String, &'static str)) {
        let me = slf.get();
        let args = (me.key.clone(), me.value.clone(), me.effect.as_str());
        (slf.get_type(), args)
    }

    fn __repr__(&self) -> String {
        format!(
            "Taint(key={:?}, value={:?}, effect={:?})",
            self.key,
            self.value,
            self.effect.as_str()
        )
    }
}

#[pymethods]
impl NodeSpec {
    #[new]
    #[pyo3(signature = (name, *, labels, allocatable, used, taints, unschedulable, ready))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        labels: HashMap<String, String>,
        allocatable: &Bound<'_, PyDict>,
        used: &Bound<'_, PyDict>,
        taints: Vec<Bound<'_, Taint>>,
        unschedulable: bool,
        ready: bool,
    ) -> PyResult<Self> {
        if name.is_empty() {
            return Err(value_error("Node.name: must not be empty".into()));
        }
        Ok(Self {
            name,
            labels,
            allocatable: amounts(allocatable, "Node.allocatable")?,
            used: amounts(used, "Node.used")?,
            taints: taints.iter().map(|t| t.get().clone()).collect(),
            unschedulable,
            ready,
        })
    }

    /// Pickles through the constructor.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let keywords = PyDict::new(py);
        keywords.set_item("labels", &me.labels)?;
        keywords.set_item("allocatable", &me.allocatable)?;
        keywords.set_item("used", &me.used)?;
        keywords.set_item("taints", me.taints.clone())?;
        keywords.set_item("unschedulable", me.unschedulable)?;
        keywords.set_item("ready", me.ready)?;
        reduce_by_keywords(slf.get_type(), &me.name, keywords)
    }

    fn __repr__(&self) -> String {
        format!("Node(name={:?}, ...)", self.name)
    }
}

#[pymethods]
impl Topology {
    #[new]
    #[pyo3(signature = (mode, level))]
    fn new(mode: &str, level: Option<usize>) -> PyResult<Self> {
        let mode = Mode::parse(mode).map_err(|e| value_error(e.0))?;
        match (mode, level) {
            (Mode::Unconstrained, Some(_)) => Err(value_error(
                "Topology.level: unconstrained takes no level".into(),
            )),
            (Mode::Required | Mode::Preferred, None) => Err(value_error(format!(
                "Topology.level: mode {} needs a level",
                mode.as_str()
            ))),
            _ => Ok(Self { mode, level }),
        }
    }

    /// Pickles through the constructor.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, PyType>, (&'static str, Option<usize>)) {
        let me = slf.get();
        (slf.get_type(), (me.mode.as_str(), me.level))
    }

    fn __repr__(&self) -> String {
        format!(
            "Topology(mode={:?}, level={:?})",
            self.mode.as_str(),
            self.level
        )
    }
}

#[pymethods]
impl Slice {
    #[new]
    #[pyo3(signature = (level, size))]
    fn new(level: usize, size: u64) -> PyResult<Self> {
        if size == 0 {
            return Err(value_error("Slice.size: must be at least 1".into()));
        }
        Ok(Self { level, size })
    }

    /// Pickles through the constructor.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyType>, (usize, u64)) {
        let me = slf.get();
        (slf.get_type(), (me.level, me.size))
    }

    fn __repr__(&self) -> String {
        format!("Slice(level={}, size={})", self.level, self.size)
    }
}

#[pymethods]
impl Toleration {
    #[new]
    #[pyo3(signature = (key, operator, value, effect))]
    fn new(key: String, operator: &str, value: String, effect: Option<&str>) -> PyResult<Self> {
        let operator = match operator {
            "Equal" => Operator::Equal,
            "Exists" => Operator::Exists,
            other => {
                return Err(value_error(format!(
                    "Toleration.operator: unknown toleration operator {other:?}"
                )))
            }
        };
        let effect = effect
            .map(Effect::parse)
            .transpose()
            .map_err(|e| value_error(e.0))?;
        Ok(Self {
            key,
            operator,
            value,
            effect,
        })
    }

    /// Pickles through the constructor.
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (
        Bound<'py, PyType>,
        (String, &'static str, String, Option<&'static str>),
    ) {
        let t = slf.get();
        (
            slf.get_type(),
            (
                t.key.clone(),
                t.operator.as_str(),
                t.value.clone(),
                t.effect.map(Effect::as_str),
            ),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "Toleration(key={:?}, operator={:?}, value={:?}, effect={:?})",
            self.key,
            self.operator.as_str(),
            self.value,
            self.effect.map(Effect::as_str)
        )
    }
}

#[pymethods]
impl TaskSpec {
    #[new]
    #[pyo3(signature = (
        name, *, replicas, min_available, requests, node_selector, tolerations, slice, topology,
        max_per_node = None, avoid_nodes = Vec::new()
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        replicas: u64,
        min_available: u64,
        requests: &Bound<'_, PyDict>,
        node_selector: BTreeMap<String, String>,
        tolerations: Vec<Bound<'_, Toleration>>,
        slice: Option<Bound<'_, Slice>>,
        topology: Option<Bound<'_, Topology>>,
        max_per_node: Option<u64>,
        mut avoid_nodes: Vec<String>,
    ) -> PyResult<Self> {
        if name.is_empty() {
            return Err(value_error("Task.name: must not be empty".into()));
        }
        avoid_nodes.sort();
        avoid_nodes.dedup();
        check_max_per_node(max_per_node, "Task.max_per_node")?;
        if replicas == 0 || min_available == 0 || min_available > replicas {
            return Err(value_error(format!(
                "Task.min_available: {min_available} is not in 1..={replicas} (replicas)"
            )));
        }
        let slice = slice.map(|s| *s.get());
        if let Some(Slice { size, .. }) = slice {
            if replicas % size != 0 || min_available % size != 0 {
                return Err(value_error(format!(
                    "Task.slice.size: {size} does not divide replicas ({replicas}) and minAvailable ({min_available})"
                )));
            }
        }
        Ok(Self {
            name,
            replicas,
            min_available,
            requests: amounts(requests, "Task.requests")?,
            node_selector,
            tolerations: tolerations.iter().map(|t| t.get().clone()).collect(),
            slice,
            topology: topology.map(|t| *t.get()),
            max_per_node,
            avoid_nodes,
        })
    }

    /// Pickles through the constructor.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let keywords = PyDict::new(py);
        keywords.set_item("replicas", me.replicas)?;
        keywords.set_item("min_available", me.min_available)?;
        keywords.set_item("requests", &me.requests)?;
        keywords.set_item("node_selector", &me.node_selector)?;
        keywords.set_item("tolerations", me.tolerations.clone())?;
        keywords.set_item("slice", me.slice)?;
        keywords.set_item("topology", me.topology)?;
        keywords.set_item("max_per_node", me.max_per_node)?;
        keywords.set_item("avoid_nodes", &me.avoid_nodes)?;
        reduce_by_keywords(slf.get_type(), &me.name, keywords)
    }

    /// A copy with `changes` (the constructor's keywords), checked as a new task is.
    #[pyo3(signature = (**changes))]
    fn __replace__<'py>(
        slf: &Bound<'py, Self>,
        changes: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        replaced(slf.as_any(), changes)
    }

    fn __repr__(&self) -> String {
        format!(
            "Task(name={:?}, replicas={}, min_available={}, ...)",
            self.name, self.replicas, self.min_available
        )
    }
}

impl GangSpec {
    /// The index of the task called `name`.
    pub(crate) fn task_index(&self, name: &str) -> Option<usize> {
        self.tasks.iter().position(|t| t.name == name)
    }
}

fn check_max_per_node(max_per_node: Option<u64>, what: &str) -> PyResult<()> {
    if max_per_node == Some(0) {
        return Err(value_error(format!("{what}: must be at least 1")));
    }
    Ok(())
}

fn check_level(level: Option<usize>, levels: &[String], what: &str) -> PyResult<()> {
    match level {
        Some(level) if level >= levels.len() => Err(value_error(format!(
            "{what}: level index {level} is out of range ({} levels)",
            levels.len()
        ))),
        _ => Ok(()),
    }
}

#[pymethods]
impl GangSpec {
    #[new]
    #[pyo3(signature = (name, *, priority, topology, tasks, levels, max_per_node = None))]
    fn new(
        name: String,
        priority: i64,
        topology: Bound<'_, Topology>,
        tasks: Vec<Bound<'_, TaskSpec>>,
        levels: Vec<String>,
        max_per_node: Option<u64>,
    ) -> PyResult<Self> {
        check_max_per_node(max_per_node, "Gang.max_per_node")?;
        if name.is_empty() {
            return Err(value_error("Gang.name: must not be empty".into()));
        }
        if tasks.is_empty() {
            return Err(value_error(
                "Gang.tasks: at least one task is needed".into(),
            ));
        }
        let topology = *topology.get();
        check_level(topology.level, &levels, "Gang.topology")?;
        let mut specs: Vec<TaskSpec> = Vec::with_capacity(tasks.len());
        for (index, task) in tasks.iter().enumerate() {
            let spec = task.get();
            if specs.iter().any(|other| other.name == spec.name) {
                return Err(value_error(format!(
                    "Gang.tasks[{index}].name: duplicate task name {:?}",
                    spec.name
                )));
            }
            check_level(
                spec.topology.and_then(|t| t.level),
                &levels,
                &format!("Gang.tasks[{index}].topology"),
            )?;
            check_level(
                spec.slice.map(|s| s.level),
                &levels,
                &format!("Gang.tasks[{index}].slice"),
            )?;
            specs.push(spec.clone());
        }
        Ok(Self {
            name,
            priority,
            topology,
            tasks: specs,
            max_per_node,
            levels,
        })
    }

    /// Pickles through the constructor (a pickled `Placement` keeps its gang).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let keywords = PyDict::new(py);
        keywords.set_item("priority", me.priority)?;
        keywords.set_item("topology", me.topology)?;
        keywords.set_item("tasks", me.tasks.clone())?;
        keywords.set_item("levels", &me.levels)?;
        keywords.set_item("max_per_node", me.max_per_node)?;
        reduce_by_keywords(slf.get_type(), &me.name, keywords)
    }

    /// A copy with `changes` (the constructor's keywords), checked as a new gang is.
    #[pyo3(signature = (**changes))]
    fn __replace__<'py>(
        slf: &Bound<'py, Self>,
        changes: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        replaced(slf.as_any(), changes)
    }

    /// Immutable, so a copy is the record itself.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Immutable, so a deep copy (of a `Placement`, say) is the record itself.
    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    fn __repr__(&self) -> String {
        format!(
            "Gang(name={:?}, priority={}, tasks=[{}])",
            self.name,
            self.priority,
            self.tasks
                .iter()
                .map(|t| format!("{:?}", t.name))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// `count` pods of task `task` on node `node`.
#[pyclass(module = "crdkit._placer", name = "Assignment", frozen, get_all)]
pub(crate) struct PyAssignment {
    /// Task name.
    pub(crate) task: String,
    /// Node name.
    pub(crate) node: String,
    /// Pods (positive).
    pub(crate) count: u64,
}

#[pymethods]
impl PyAssignment {
    #[new]
    #[pyo3(signature = (task, node, count))]
    fn new(task: String, node: String, count: u64) -> PyResult<Self> {
        if count == 0 {
            return Err(value_error("Assignment.count: must be at least 1".into()));
        }
        Ok(Self { task, node, count })
    }

    fn __repr__(&self) -> String {
        format!(
            "Assignment(task={:?}, node={:?}, count={})",
            self.task, self.node, self.count
        )
    }
}

fn fit_unit(unit: &str) -> PyResult<&'static str> {
    match unit {
        "pods" => Ok("pods"),
        "slices" => Ok("slices"),
        other => Err(value_error(format!(
            "Fit.unit: {other:?} is not pods or slices"
        ))),
    }
}

#[pymethods]
impl FitReport {
    #[new]
    #[pyo3(signature = (best_domain, fits, wants, unit))]
    fn new(best_domain: Option<String>, fits: u64, wants: u64, unit: &str) -> PyResult<Self> {
        Ok(Self {
            best_domain,
            fits,
            wants,
            unit: fit_unit(unit)?,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Fit(best_domain={:?}, fits={}, wants={}, unit={:?})",
            self.best_domain, self.fits, self.wants, self.unit
        )
    }
}

fn status_of(text: &str) -> PyResult<Status> {
    match text {
        "placed" => Ok(Status::Placed),
        "minimal" => Ok(Status::Minimal),
        "unschedulable" => Ok(Status::Unschedulable),
        other => Err(value_error(format!(
            "Outcome.status: unknown status {other:?}"
        ))),
    }
}

/// An engine's answer for one compiled gang, with level and task names resolved.
#[pyclass(module = "crdkit._placer", name = "Outcome", frozen)]
pub(crate) struct PyOutcome {
    request: Py<GangSpec>,
    status: Status,
    /// `(task, node, count)`, sorted by task order then node.
    assignments: Vec<(String, String, u64)>,
    level: Option<String>,
    domain: Vec<(String, String)>,
    placed: Vec<(String, u64)>,
    reason: Option<String>,
    fit: Option<FitReport>,
}

impl PyOutcome {
    /// Resolves a core outcome's task and level indexes with the gang's names.
    pub(crate) fn resolve(request: Py<GangSpec>, outcome: crate::model::Outcome) -> Self {
        let gang = request.get();
        let task_name = |index: usize| {
            gang.tasks
                .get(index)
                .map_or_else(|| format!("#{index}"), |t| t.name.clone())
        };
        let mut placed: Vec<(String, u64)> =
            gang.tasks.iter().map(|t| (t.name.clone(), 0)).collect();
        for &(task, _, count) in &outcome.assignments {
            if let Some(entry) = placed.get_mut(task) {
                entry.1 += count;
            }
        }
        let assignments = outcome
            .assignments
            .into_iter()
            .map(|(task, node, count)| (task_name(task), node, count))
            .collect();
        let level = outcome.level.map(|l| {
            gang.levels
                .get(l)
                .cloned()
                .unwrap_or_else(|| format!("#{l}"))
        });
        let domain = gang.levels.iter().cloned().zip(outcome.domain).collect();
        Self {
            request,
            status: outcome.status,
            assignments,
            level,
            domain,
            placed,
            reason: outcome.reason,
            fit: outcome.fit,
        }
    }
}

#[pymethods]
impl PyOutcome {
    #[new]
    #[pyo3(signature = (request, *, status, assignments, level, domain, reason, fit))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        request: Bound<'_, GangSpec>,
        status: &str,
        assignments: Vec<Bound<'_, PyAssignment>>,
        level: Option<String>,
        domain: &Bound<'_, PyDict>,
        reason: Option<String>,
        fit: Option<Bound<'_, FitReport>>,
    ) -> PyResult<Self> {
        let status = status_of(status)?;
        let gang = request.get();
        let mut placed: Vec<(String, u64)> =
            gang.tasks.iter().map(|t| (t.name.clone(), 0)).collect();
        let mut resolved = Vec::with_capacity(assignments.len());
        for (index, assignment) in assignments.iter().enumerate() {
            let a = assignment.get();
            let task = gang.task_index(&a.task).ok_or_else(|| {
                value_error(format!(
                    "Outcome.assignments[{index}].task: no task {:?} in gang {:?}",
                    a.task, gang.name
                ))
            })?;
            placed[task].1 += a.count;
            resolved.push((a.task.clone(), a.node.clone(), a.count));
        }
        let domain = domain
            .iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<String>()?)))
            .collect::<PyResult<Vec<(String, String)>>>()?;
        Ok(Self {
            request: request.unbind(),
            status,
            assignments: resolved,
            level,
            domain,
            placed,
            reason,
            fit: fit.map(|f| f.get().clone()),
        })
    }

    /// The compiled gang this answers.
    #[getter]
    fn request(&self, py: Python<'_>) -> Py<GangSpec> {
        self.request.clone_ref(py)
    }

    /// The gang's name.
    #[getter]
    fn gang(&self) -> &str {
        &self.request.get().name
    }

    /// `placed`, `minimal` or `unschedulable`.
    #[getter]
    fn status(&self) -> &'static str {
        self.status.as_str()
    }

    /// Pods per node, sorted by task order then node name; empty when unschedulable.
    #[getter]
    fn assignments(&self) -> Vec<PyAssignment> {
        self.assignments
            .iter()
            .map(|(task, node, count)| PyAssignment {
                task: task.clone(),
                node: node.clone(),
                count: *count,
            })
            .collect()
    }

    /// The level of the lowest domain holding every placed pod.
    #[getter]
    fn level(&self) -> Option<&str> {
        self.level.as_deref()
    }

    /// That domain's label values by level, widest first.
    #[getter]
    fn domain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (level, value) in &self.domain {
            dict.set_item(level, value)?;
        }
        Ok(dict)
    }

    /// Pods placed per task, every task named.
    #[getter]
    fn placed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (task, count) in &self.placed {
            dict.set_item(task, count)?;
        }
        Ok(dict)
    }

    /// One-line reason when unschedulable.
    #[getter]
    fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The numbers behind the reason, where they apply.
    #[getter]
    fn fit(&self) -> Option<FitReport> {
        self.fit.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "Outcome(gang={:?}, status={:?}, assignments={})",
            self.request.get().name,
            self.status.as_str(),
            self.assignments.len()
        )
    }
}
