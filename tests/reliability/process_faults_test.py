"""Reliability: a training run killed (SIGKILL) and restarted, and a full disk while saving.

CI runs two kills (one at a random moment, one during a checkpoint write); `make reliability`
runs five. The evaluator's side (checkpoints deleted under it) is tested in
tests/evaluator_test.py (test_loop_skips_checkpoint_deleted_before_its_turn_with_log,
test_loop_survives_checkpoint_vanishing_during_evaluation).
"""

import faults_process
import pytest

from aster.tf_setup import tf
from aster.utils import hooks


@pytest.mark.slow
def test_sigkill_and_restart_resumes_and_finishes(tmp_path):
    result = faults_process.sigkill_run(str(tmp_path), kills=2, num_steps=24, seed=1)
    assert result.failures == [] and result.held == result.tried, result


@pytest.mark.slow
def test_full_disk_keeps_the_previous_checkpoint_and_stops_clearly(tmp_path):
    result = faults_process.full_disk_run(str(tmp_path))
    if result is None:
        pytest.skip("this machine does not allow mounting a size-limited tmpfs")
    assert result.failures == [] and result.held == 1, result


class _FailingSaver:
    def save(self, *args, **kwargs):
        raise tf.errors.ResourceExhaustedError(
            None, None, "Graph execution error:\n\nDetected at node 'save'\n  File x\n"
            "Node: 'save/SaveV2'\nfoo.tempstate1; No space left on device\n\t [[{{node save}}]]")


def test_checkpoint_write_error_names_the_reason_and_the_last_good_checkpoint(tmp_path):
    hook = hooks.CheckpointHook(str(tmp_path), _FailingSaver())
    with pytest.raises(hooks.CheckpointWriteError,
                       match=r"model\.ckpt-7 .* No space left on device\. The newest complete "
                             r"checkpoint is \(none\)"):
        hook._save(None, 7)
