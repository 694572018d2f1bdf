//! The typed records that cross the Python-Rust boundary.
//!
//! `crdkit.placer.models.compile_node` and `compile_gang` validate a request once (field paths,
//! quantities, levels) and build these records; the Rust core keeps the converted spec inside
//! each record, so placing a compiled gang extracts nothing more from Python. `Engine.place`
//! answers with an [`PyOutcome`]. Every record is frozen: what was compiled is what is placed.
//! The constructors still refuse records the core could not use, with a `ValueError`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::model::{
    Effect, FitReport, GangSpec, Mode, NodeSpec, Operator, Status, Taint, TaskSpec, Toleration,
    Topology,
};

fn value_error(message: String) -> PyErr {
    PyValueError::new_err(message)
}

fn effect_str(effect: Effect) -> &'static str {
    match effect {
        Effect::NoSchedule => "NoSchedule",
        Effect::PreferNoSchedule => "PreferNoSchedule",
        Effect::NoExecute => "NoExecute",
    }
}

fn operator_str(operator: Operator) -> &'static str {
    match operator {
        Operator::Equal => "Equal",
        Operator::Exists => "Exists",
    }
}

/// A dict of name to milli-units, in the dict's order; amounts must not be negative.
fn amounts(dict: &Bound<'_, PyDict>, what: &str) -> PyResult<Vec<(String, i64)>> {
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
    Ok(result)
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

fn amounts_dict<'py>(py: Python<'py>, amounts: &[(String, i64)]) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, milli) in amounts {
        dict.set_item(name, milli)?;
    }
    Ok(dict)
}

/// A node taint.
#[pyclass(module = "crdkit._placer", name = "Taint", frozen)]
pub(crate) struct PyTaint(pub(crate) Taint);

#[pymethods]
impl PyTaint {
    #[new]
    #[pyo3(signature = (key, value, effect))]
    fn new(key: String, value: String, effect: &str) -> PyResult<Self> {
        let effect = Effect::parse(effect).map_err(|e| value_error(e.0))?;
        Ok(Self(Taint { key, value, effect }))
    }

    /// Taint key.
    #[getter]
    fn key(&self) -> &str {
        &self.0.key
    }

    /// Taint value.
    #[getter]
    fn value(&self) -> &str {
        &self.0.value
    }

    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    #[getter]
    fn effect(&self) -> &'static str {
        effect_str(self.0.effect)
    }

    fn __repr__(&self) -> String {
        format!(
            "Taint(key={:?}, value={:?}, effect={:?})",
            self.0.key,
            self.0.value,
            effect_str(self.0.effect)
        )
    }
}

/// A compiled node: quantities in milli-units.
#[pyclass(module = "crdkit._placer", name = "Node", frozen)]
pub(crate) struct PyNode(pub(crate) NodeSpec);

#[pymethods]
impl PyNode {
    #[new]
    #[pyo3(signature = (name, *, labels, allocatable, used, taints, unschedulable, ready))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        labels: std::collections::HashMap<String, String>,
        allocatable: &Bound<'_, PyDict>,
        used: &Bound<'_, PyDict>,
        taints: Vec<Bound<'_, PyTaint>>,
        unschedulable: bool,
        ready: bool,
    ) -> PyResult<Self> {
        if name.is_empty() {
            return Err(value_error("Node.name: must not be empty".into()));
        }
        Ok(Self(NodeSpec {
            name,
            labels,
            allocatable: amounts(allocatable, "Node.allocatable")?,
            used: amounts(used, "Node.used")?,
            taints: taints.iter().map(|t| t.get().0.clone()).collect(),
            unschedulable,
            ready,
        }))
    }

    /// Unique node name.
    #[getter]
    fn name(&self) -> &str {
        &self.0.name
    }

    /// Node labels.
    #[getter]
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (key, value) in &self.0.labels {
            dict.set_item(key, value)?;
        }
        Ok(dict)
    }

    /// Allocatable resources in milli-units.
    #[getter]
    fn allocatable<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        amounts_dict(py, &self.0.allocatable)
    }

    /// Used resources in milli-units.
    #[getter]
    fn used<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        amounts_dict(py, &self.0.used)
    }

    /// Taints.
    #[getter]
    fn taints(&self) -> Vec<PyTaint> {
        self.0.taints.iter().cloned().map(PyTaint).collect()
    }

    /// Cordoned.
    #[getter]
    fn unschedulable(&self) -> bool {
        self.0.unschedulable
    }

    /// Ready.
    #[getter]
    fn ready(&self) -> bool {
        self.0.ready
    }

    fn __repr__(&self) -> String {
        format!("Node(name={:?}, ...)", self.0.name)
    }
}

/// A topology constraint: a mode and, unless unconstrained, a level index.
#[pyclass(module = "crdkit._placer", name = "Topology", frozen)]
pub(crate) struct PyTopology(pub(crate) Topology);

#[pymethods]
impl PyTopology {
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
            _ => Ok(Self(Topology { mode, level })),
        }
    }

    /// `required`, `preferred` or `unconstrained`.
    #[getter]
    fn mode(&self) -> &'static str {
        self.0.mode.as_str()
    }

    /// Pickles through the constructor.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, PyType>, (&'static str, Option<usize>)) {
        let me = slf.get();
        (slf.get_type(), (me.0.mode.as_str(), me.0.level))
    }

    /// Index into the effective levels; `None` when unconstrained.
    #[getter]
    fn level(&self) -> Option<usize> {
        self.0.level
    }

    fn __repr__(&self) -> String {
        format!(
            "Topology(mode={:?}, level={:?})",
            self.0.mode.as_str(),
            self.0.level
        )
    }
}

/// Pods in groups of `size`, each group inside one domain of level index `level`.
#[pyclass(module = "crdkit._placer", name = "Slice", frozen)]
pub(crate) struct PySlice {
    level: usize,
    size: u64,
}

#[pymethods]
impl PySlice {
    #[new]
    #[pyo3(signature = (level, size))]
    fn new(level: usize, size: u64) -> PyResult<Self> {
        if size == 0 {
            return Err(value_error("Slice.size: must be at least 1".into()));
        }
        Ok(Self { level, size })
    }

    /// Level index.
    #[getter]
    fn level(&self) -> usize {
        self.level
    }

    /// Pods per slice.
    #[getter]
    fn size(&self) -> u64 {
        self.size
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

/// A toleration (Kubernetes' rules).
#[pyclass(module = "crdkit._placer", name = "Toleration", frozen)]
pub(crate) struct PyToleration(pub(crate) Toleration);

#[pymethods]
impl PyToleration {
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
        Ok(Self(Toleration {
            key,
            operator,
            value,
            effect,
        }))
    }

    /// Key to match; empty with `Exists` matches every taint.
    #[getter]
    fn key(&self) -> &str {
        &self.0.key
    }

    /// `Equal` or `Exists`.
    #[getter]
    fn operator(&self) -> &'static str {
        operator_str(self.0.operator)
    }

    /// Value for `Equal`.
    #[getter]
    fn value(&self) -> &str {
        &self.0.value
    }

    /// Effect to match; `None` matches every effect.
    #[getter]
    fn effect(&self) -> Option<&'static str> {
        self.0.effect.map(effect_str)
    }

    /// Pickles through the constructor.
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (
        Bound<'py, PyType>,
        (String, &'static str, String, Option<&'static str>),
    ) {
        let t = &slf.get().0;
        (
            slf.get_type(),
            (
                t.key.clone(),
                operator_str(t.operator),
                t.value.clone(),
                t.effect.map(effect_str),
            ),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "Toleration(key={:?}, operator={:?}, value={:?}, effect={:?})",
            self.0.key,
            operator_str(self.0.operator),
            self.0.value,
            self.0.effect.map(effect_str)
        )
    }
}

/// A compiled task: requests in milli-units, levels as indexes.
#[pyclass(module = "crdkit._placer", name = "Task", frozen)]
pub(crate) struct PyTask(pub(crate) TaskSpec);

#[pymethods]
impl PyTask {
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
        node_selector: std::collections::HashMap<String, String>,
        tolerations: Vec<Bound<'_, PyToleration>>,
        slice: Option<Bound<'_, PySlice>>,
        topology: Option<Bound<'_, PyTopology>>,
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
        let slice = slice.map(|s| (s.get().level, s.get().size));
        if let Some((_, size)) = slice {
            if replicas % size != 0 || min_available % size != 0 {
                return Err(value_error(format!(
                    "Task.slice.size: {size} does not divide replicas ({replicas}) and minAvailable ({min_available})"
                )));
            }
        }
        let mut node_selector: Vec<(String, String)> = node_selector.into_iter().collect();
        node_selector.sort();
        Ok(Self(TaskSpec {
            name,
            replicas,
            min_available,
            requests: amounts(requests, "Task.requests")?,
            node_selector,
            tolerations: tolerations.iter().map(|t| t.get().0.clone()).collect(),
            slice,
            topology: topology.map(|t| t.get().0),
            max_per_node,
            avoid_nodes,
        }))
    }

    /// Task name, unique in the gang.
    #[getter]
    fn name(&self) -> &str {
        &self.0.name
    }

    /// Pods wanted.
    #[getter]
    fn replicas(&self) -> u64 {
        self.0.replicas
    }

    /// Fewest pods the task can start with.
    #[getter]
    fn min_available(&self) -> u64 {
        self.0.min_available
    }

    /// Per-pod requests in milli-units.
    #[getter]
    fn requests<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        amounts_dict(py, &self.0.requests)
    }

    /// Exact label matches a node must have.
    #[getter]
    fn node_selector<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (key, value) in &self.0.node_selector {
            dict.set_item(key, value)?;
        }
        Ok(dict)
    }

    /// Tolerations.
    #[getter]
    fn tolerations(&self) -> Vec<PyToleration> {
        self.0
            .tolerations
            .iter()
            .cloned()
            .map(PyToleration)
            .collect()
    }

    /// The slice, if any.
    #[getter]
    fn slice(&self) -> Option<PySlice> {
        self.0.slice.map(|(level, size)| PySlice { level, size })
    }

    /// The task's own constraint; `None` places it with the gang's group.
    #[getter]
    fn topology(&self) -> Option<PyTopology> {
        self.0.topology.map(PyTopology)
    }

    /// At most this many of the task's pods on one node; `None`: no such limit.
    #[getter]
    fn max_per_node(&self) -> Option<u64> {
        self.0.max_per_node
    }

    /// Nodes the task's pods must not go to, sorted.
    #[getter]
    fn avoid_nodes(&self) -> Vec<String> {
        self.0.avoid_nodes.clone()
    }

    /// Pickles through the constructor.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let keywords = PyDict::new(py);
        keywords.set_item("replicas", me.0.replicas)?;
        keywords.set_item("min_available", me.0.min_available)?;
        keywords.set_item("requests", me.requests(py)?)?;
        keywords.set_item("node_selector", me.node_selector(py)?)?;
        keywords.set_item("tolerations", me.tolerations())?;
        keywords.set_item("slice", me.slice())?;
        keywords.set_item("topology", me.topology())?;
        keywords.set_item("max_per_node", me.0.max_per_node)?;
        keywords.set_item("avoid_nodes", me.avoid_nodes())?;
        reduce_by_keywords(slf.get_type(), &me.0.name, keywords)
    }

    fn __repr__(&self) -> String {
        format!(
            "Task(name={:?}, replicas={}, min_available={}, ...)",
            self.0.name, self.0.replicas, self.0.min_available
        )
    }
}

/// A compiled gang, bound to the effective levels it was compiled against.
#[pyclass(module = "crdkit._placer", name = "Gang", frozen)]
pub(crate) struct PyGang {
    /// What the core places.
    pub(crate) spec: GangSpec,
    /// Orders a batch.
    pub(crate) priority: i64,
    /// The effective levels the level indexes refer to.
    pub(crate) levels: Vec<String>,
    tasks: Vec<Py<PyTask>>,
}

impl PyGang {
    /// The index of the task called `name`.
    pub(crate) fn task_index(&self, name: &str) -> Option<usize> {
        self.spec.tasks.iter().position(|t| t.name == name)
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
impl PyGang {
    #[new]
    #[pyo3(signature = (name, *, priority, topology, tasks, levels, max_per_node = None))]
    fn new(
        name: String,
        priority: i64,
        topology: Bound<'_, PyTopology>,
        tasks: Vec<Bound<'_, PyTask>>,
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
        let topology = topology.get().0;
        check_level(topology.level, &levels, "Gang.topology")?;
        let mut specs: Vec<TaskSpec> = Vec::with_capacity(tasks.len());
        for (index, task) in tasks.iter().enumerate() {
            let spec = &task.get().0;
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
                spec.slice.map(|(level, _)| level),
                &levels,
                &format!("Gang.tasks[{index}].slice"),
            )?;
            specs.push(spec.clone());
        }
        Ok(Self {
            spec: GangSpec {
                name,
                topology,
                tasks: specs,
                max_per_node,
            },
            priority,
            levels,
            tasks: tasks.into_iter().map(Bound::unbind).collect(),
        })
    }

    /// Gang name.
    #[getter]
    fn name(&self) -> &str {
        &self.spec.name
    }

    /// Orders a batch: higher first, then input order.
    #[getter]
    fn priority(&self) -> i64 {
        self.priority
    }

    /// The constraint on the tasks without their own topology.
    #[getter]
    fn topology(&self) -> PyTopology {
        PyTopology(self.spec.topology)
    }

    /// The tasks, in order.
    #[getter]
    fn tasks(&self, py: Python<'_>) -> Vec<Py<PyTask>> {
        self.tasks.iter().map(|t| t.clone_ref(py)).collect()
    }

    /// The effective levels the level indexes refer to.
    #[getter]
    fn levels(&self) -> Vec<String> {
        self.levels.clone()
    }

    /// At most this many of the gang's pods (every task together) on one node.
    #[getter]
    fn max_per_node(&self) -> Option<u64> {
        self.spec.max_per_node
    }

    /// Pickles through the constructor (a pickled `Placement` keeps its gang).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let keywords = PyDict::new(py);
        keywords.set_item("priority", me.priority)?;
        keywords.set_item("topology", me.topology())?;
        keywords.set_item("tasks", me.tasks(py))?;
        keywords.set_item("levels", me.levels())?;
        keywords.set_item("max_per_node", me.spec.max_per_node)?;
        reduce_by_keywords(slf.get_type(), &me.spec.name, keywords)
    }

    /// Immutable, so a copy is the record itself.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Immutable, so a deep copy (of a `Placement`, say) is the record itself.
    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyGang>().is_ok_and(|other| {
            let other = other.get();
            self.spec == other.spec
                && self.priority == other.priority
                && self.levels == other.levels
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Gang(name={:?}, priority={}, tasks=[{}])",
            self.spec.name,
            self.priority,
            self.spec
                .tasks
                .iter()
                .map(|t| format!("{:?}", t.name))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// `count` pods of task `task` on node `node`.
#[pyclass(module = "crdkit._placer", name = "Assignment", frozen)]
pub(crate) struct PyAssignment {
    pub(crate) task: String,
    pub(crate) node: String,
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

    /// Task name.
    #[getter]
    fn task(&self) -> &str {
        &self.task
    }

    /// Node name.
    #[getter]
    fn node(&self) -> &str {
        &self.node
    }

    /// Pods (positive).
    #[getter]
    fn count(&self) -> u64 {
        self.count
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

/// The numbers behind an unschedulable reason.
#[pyclass(module = "crdkit._placer", name = "Fit", frozen)]
pub(crate) struct PyFit(pub(crate) FitReport);

#[pymethods]
impl PyFit {
    #[new]
    #[pyo3(signature = (best_domain, fits, wants, unit))]
    fn new(best_domain: Option<String>, fits: u64, wants: u64, unit: &str) -> PyResult<Self> {
        Ok(Self(FitReport {
            best_domain,
            fits,
            wants,
            unit: fit_unit(unit)?,
        }))
    }

    /// The best domain's value at the constraint level; `None` for the whole cluster.
    #[getter]
    fn best_domain(&self) -> Option<&str> {
        self.0.best_domain.as_deref()
    }

    /// Units that fit.
    #[getter]
    fn fits(&self) -> u64 {
        self.0.fits
    }

    /// Units wanted.
    #[getter]
    fn wants(&self) -> u64 {
        self.0.wants
    }

    /// `pods` or `slices`.
    #[getter]
    fn unit(&self) -> &'static str {
        self.0.unit
    }

    fn __repr__(&self) -> String {
        format!(
            "Fit(best_domain={:?}, fits={}, wants={}, unit={:?})",
            self.0.best_domain, self.0.fits, self.0.wants, self.0.unit
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
    request: Py<PyGang>,
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
    pub(crate) fn resolve(request: Py<PyGang>, outcome: crate::model::Outcome) -> Self {
        let gang = request.get();
        let task_name = |index: usize| {
            gang.spec
                .tasks
                .get(index)
                .map_or_else(|| format!("#{index}"), |t| t.name.clone())
        };
        let mut placed: Vec<(String, u64)> = gang
            .spec
            .tasks
            .iter()
            .map(|t| (t.name.clone(), 0))
            .collect();
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
        request: Bound<'_, PyGang>,
        status: &str,
        assignments: Vec<Bound<'_, PyAssignment>>,
        level: Option<String>,
        domain: &Bound<'_, PyDict>,
        reason: Option<String>,
        fit: Option<Bound<'_, PyFit>>,
    ) -> PyResult<Self> {
        let status = status_of(status)?;
        let gang = request.get();
        let mut placed: Vec<(String, u64)> = gang
            .spec
            .tasks
            .iter()
            .map(|t| (t.name.clone(), 0))
            .collect();
        let mut resolved = Vec::with_capacity(assignments.len());
        for (index, assignment) in assignments.iter().enumerate() {
            let a = assignment.get();
            let task = gang.task_index(&a.task).ok_or_else(|| {
                value_error(format!(
                    "Outcome.assignments[{index}].task: no task {:?} in gang {:?}",
                    a.task, gang.spec.name
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
            fit: fit.map(|f| f.get().0.clone()),
        })
    }

    /// The compiled gang this answers.
    #[getter]
    fn request(&self, py: Python<'_>) -> Py<PyGang> {
        self.request.clone_ref(py)
    }

    /// The gang's name.
    #[getter]
    fn gang(&self) -> &str {
        &self.request.get().spec.name
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
    fn fit(&self) -> Option<PyFit> {
        self.fit.clone().map(PyFit)
    }

    fn __repr__(&self) -> String {
        format!(
            "Outcome(gang={:?}, status={:?}, assignments={})",
            self.request.get().spec.name,
            self.status.as_str(),
            self.assignments.len()
        )
    }
}
