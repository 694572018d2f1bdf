//! Batches: several gangs decided on one snapshot, each seeing the pods of the ones before it.
//!
//! The contract (docs/reference/placement-io.md) orders a batch by `priority`, higher first, then input
//! order. Every placed gang's pods are assumed before the next gang is decided and all of them
//! are released at the end, so the cluster is unchanged afterwards. Only
//! [`ClusterState::place_with`], [`ClusterState::assume`] and [`ClusterState::release`] are used.

use std::cmp::Reverse;

use crate::model::{GangSpec, Outcome, PlacedPods, PlacerError, Policy};
use crate::state::ClusterState;

/// One gang of a batch with the priority that orders it.
#[derive(Debug, Clone, Copy)]
pub struct BatchItem<'a> {
    /// The request.
    pub gang: &'a GangSpec,
    /// Higher goes first; equal priorities keep their input order.
    pub priority: i64,
}

/// The order a batch is placed in: indexes into `priorities`, higher priority first, then by
/// index.
pub fn placement_order(priorities: &[i64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..priorities.len()).collect();
    order.sort_by_key(|&i| (Reverse(priorities[i]), i)); // stable, and the index breaks ties
    order
}

/// The pods of a placed gang as [`ClusterState::assume`] takes them.
pub fn placed_pods(gang: &GangSpec, outcome: &Outcome) -> Result<Vec<PlacedPods>, PlacerError> {
    outcome
        .assignments
        .iter()
        .map(|(task, node, count)| {
            let spec = gang.tasks.get(*task).ok_or_else(|| {
                PlacerError(format!(
                    "gang {:?}: no task {task} in the outcome",
                    gang.name
                ))
            })?;
            Ok((node.clone(), spec.requests.to_vec(), *count))
        })
        .collect()
}

impl ClusterState {
    /// Places a batch in [`placement_order`], each gang seeing the usage of the ones placed
    /// before it. Returns `(input index, outcome)` in placement order. The state is unchanged
    /// afterwards.
    pub fn place_all(
        &mut self,
        batch: &[BatchItem<'_>],
        policy: Policy,
    ) -> Result<Vec<(usize, Outcome)>, PlacerError> {
        let priorities: Vec<i64> = batch.iter().map(|item| item.priority).collect();
        let mut results = Vec::with_capacity(batch.len());
        let mut held: Vec<Vec<PlacedPods>> = Vec::new();
        let mut failure = None;
        for index in placement_order(&priorities) {
            let gang = batch[index].gang;
            let outcome = self.place_with(gang, policy);
            if !outcome.assignments.is_empty() {
                match placed_pods(gang, &outcome).and_then(|pods| {
                    self.assume(&pods)?;
                    Ok(pods)
                }) {
                    Ok(pods) => held.push(pods),
                    Err(err) => {
                        failure = Some(err);
                        break;
                    }
                }
            }
            results.push((index, outcome));
        }
        for pods in held.iter().rev() {
            self.release(pods)?;
        }
        match failure {
            Some(err) => Err(err),
            None => Ok(results),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mode, Status};
    use crate::testing::{cluster, gang, gpu_node, gpu_task};

    #[test]
    fn order_is_priority_descending_then_input_order() {
        assert_eq!(placement_order(&[0, 5, 0, 7, 5]), [3, 1, 4, 0, 2]);
        assert!(placement_order(&[]).is_empty());
    }

    #[test]
    fn later_gangs_see_earlier_ones_and_the_state_is_unchanged() {
        let mut state = cluster(vec![
            gpu_node("n1", "b1", "r1", 8, 0),
            gpu_node("n2", "b1", "r1", 8, 0),
        ]);
        let before = state.used();
        let mut low = gang(Mode::Unconstrained, None, vec![gpu_task("w", 12, 1)]);
        low.name = "low".into();
        let mut high = gang(Mode::Unconstrained, None, vec![gpu_task("w", 12, 1)]);
        high.name = "high".into();
        let batch = [
            BatchItem {
                gang: &low,
                priority: 0,
            },
            BatchItem {
                gang: &high,
                priority: 5,
            },
        ];
        let results = state.place_all(&batch, Policy::BestFit).expect("batch");
        let summary: Vec<(usize, Status)> = results.iter().map(|(i, o)| (*i, o.status)).collect();
        assert_eq!(summary, [(1, Status::Placed), (0, Status::Unschedulable)]);
        assert_eq!(state.used(), before);
        // Alone, the low gang fits: only the high one's pods kept it out.
        assert_eq!(state.place(&low).status, Status::Placed);
    }

    #[test]
    fn a_batch_equals_placing_and_assuming_in_turn() {
        let nodes = vec![
            gpu_node("n1", "b1", "r1", 8, 2),
            gpu_node("n2", "b1", "r2", 8, 0),
            gpu_node("n3", "b2", "r3", 8, 5),
        ];
        let gangs = [
            gang(Mode::Required, Some(1), vec![gpu_task("a", 4, 1)]),
            gang(Mode::Unconstrained, None, vec![gpu_task("b", 6, 1)]),
            gang(Mode::Preferred, Some(1), vec![gpu_task("c", 3, 2)]),
        ];
        let mut batched = cluster(nodes.clone());
        let batch: Vec<BatchItem<'_>> = gangs
            .iter()
            .map(|g| BatchItem {
                gang: g,
                priority: 0,
            })
            .collect();
        let results = batched.place_all(&batch, Policy::BestFit).expect("batch");
        let mut stepwise = cluster(nodes);
        for (index, outcome) in results {
            let expected = stepwise.place(&gangs[index]);
            assert_eq!(outcome, expected);
            let pods = placed_pods(&gangs[index], &expected).expect("pods");
            stepwise.assume(&pods).expect("assume");
        }
    }
}
