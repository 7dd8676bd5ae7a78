"""A workload class is refused when its shape is no GPU workload at all, naming the field."""

import pytest
from pydantic import ValidationError

from placement.rules.workloads import WorkloadClass


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("gpus_per_replica", 1e-7, "greater than or equal to 0.01"),
        ("gpus_per_replica", float("nan"), "finite number"),
        ("gpu_memory_gib", 0.0001, "greater than or equal to 0.0625"),
        ("gpu_memory_gib", float("inf"), "finite number"),
    ],
)
def test_a_share_or_memory_no_mechanism_can_hand_out_names_the_field(field, value, says):
    shape = {"name": "x", "kind": "training", "replicas": 1, "gpus_per_replica": 1, "gpu_memory_gib": 8, field: value}
    with pytest.raises(ValidationError) as exc:
        WorkloadClass(**shape)
    (error,) = exc.value.errors()
    assert error["loc"] == (field,) and says in error["msg"]
