//! Builders shared by the unit tests of the core.

use std::collections::{BTreeMap, HashMap};

use crate::model::{Amounts, GangSpec, Mode, NodeSpec, TaskSpec, Topology};
use crate::state::ClusterState;

pub(crate) const BLOCK: &str = "t.io/block";
pub(crate) const RACK: &str = "t.io/rack";
pub(crate) const HOST: &str = "kubernetes.io/hostname";

/// A node in block `b`, rack `r`, with `gpus` allocatable and `used` of them in use.
pub(crate) fn gpu_node(name: &str, block: &str, rack: &str, gpus: i64, used: i64) -> NodeSpec {
    NodeSpec {
        name: name.into(),
        labels: HashMap::from([(BLOCK.into(), block.into()), (RACK.into(), rack.into())]),
        allocatable: Amounts(vec![
            ("nvidia.com/gpu".into(), gpus * 1000),
            ("pods".into(), 110_000),
        ]),
        used: Amounts(vec![("nvidia.com/gpu".into(), used * 1000)]),
        taints: Vec::new(),
        unschedulable: false,
        ready: true,
    }
}

/// Block/rack levels with the implicit per-node level.
pub(crate) fn cluster(nodes: Vec<NodeSpec>) -> ClusterState {
    let mut state =
        ClusterState::new(vec![BLOCK.into(), RACK.into(), HOST.into()], true).expect("levels");
    for node in nodes {
        state.add_node(node).expect("new node");
    }
    state
}

/// A task of `replicas` pods of `gpus` GPUs each.
pub(crate) fn gpu_task(name: &str, replicas: u64, gpus: i64) -> TaskSpec {
    TaskSpec {
        name: name.into(),
        replicas,
        min_available: replicas,
        requests: Amounts(vec![("nvidia.com/gpu".into(), gpus * 1000)]),
        node_selector: BTreeMap::new(),
        tolerations: Vec::new(),
        slice: None,
        topology: None,
        max_per_node: None,
        avoid_nodes: Vec::new(),
    }
}

/// A gang of `tasks` under a gang-level constraint.
pub(crate) fn gang(mode: Mode, level: Option<usize>, tasks: Vec<TaskSpec>) -> GangSpec {
    GangSpec {
        name: "g".into(),
        priority: 0,
        topology: Topology { mode, level },
        tasks,
        max_per_node: None,
        levels: vec![BLOCK.into(), RACK.into(), HOST.into()],
    }
}
