"""Scenario documents made by the tests themselves (sized for how long a run should take)."""


def batch_scenario(jobs: int, nodes: int = 16, name: str = "evidence-test", seed: int = 1) -> dict:
    return {
        "name": name,
        "seed": seed,
        "horizon": "7d",
        "pool": {"node_groups": [{"name": "dgx", "count": nodes, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]},
        "tenants": [{"name": "research"}, {"name": "serving"}],
        "workloads": [
            {
                "kind": "batch",
                "name": "jobs",
                "tenant": "research",
                "count": jobs,
                "arrival": {"poisson_per_hour": max(1.0, jobs / 100)},
                "gpus_per_worker": {"dist": "choice", "values": [1, 2, 4]},
                "duration": {"dist": "exponential", "mean": "2h"},
            },
            {
                "kind": "inference",
                "name": "chat",
                "tenant": "serving",
                "replicas": 4,
                "model_memory_gib": 20,
                "arrival_rate": 50,
                "service_time": {"mean": 0.05},
                "slo": {"p99": 0.5},
            },
        ],
    }
