"""Compare and compose pages: verdicts update in place, ranked stacks with contract checks, a
saved stack gets its own page."""

import html
import json
import re

import pytest

from placement.stacks.models import Stack

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_compare_page_explains_a_cross_layer_pair_and_names_the_contract(client):
    page = client.get("/compare/?slugs=hami&slugs=volcano").content.decode()
    assert "<title>Compare projects" in page
    assert "cross" in page.lower() and "Contract:" in page


def test_compare_verdicts_update_in_place_as_an_htmx_fragment(client):
    fragment = client.get("/compare/?slugs=time-slicing&slugs=cuda-mps", **HTMX).content.decode()
    assert "<html" not in fragment and fragment.strip().startswith('<section id="compare-result"')
    assert "verdict" in fragment


def test_compare_with_an_unknown_project_names_the_field(client):
    page = client.get("/compare/?slugs=hami&slugs=not-a-project").content.decode()
    assert "slugs" in page and "not-a-project" in page


def compose_url(**params) -> str:
    base = {"profile": "online_inference", "goal": "latency_sensitive", "gpu_model": "A100-80GB", "gpu_count": "32"}
    base.update(params)
    return "/compose/?" + "&".join(f"{k}={v}" for k, v in base.items())


def test_compose_ranks_stacks_with_contract_checks(client):
    page = client.get(compose_url()).content.decode()
    assert "#1 " in page and "Contract checks" in page
    assert "✔ advertise" in page and "✔ bind" in page and "✔ allocate" in page


def test_a_workload_class_on_the_page_rules_out_mig_for_nvlink_workers_and_says_why(client):
    row = {"w1-name": "llm", "w1-kind": "training", "w1-replicas": "8", "w1-gpus_per_replica": "8",
           "w1-gpu_memory_gib": "70", "w1-gang": "on", "w1-peer_to_peer": "on"}
    page = client.get(compose_url(profile="", goal="", gpu_count="64", **row)).content.decode()
    assert "#1 " in page and "8 whole GPUs per replica" in page
    assert 'id="why-not-mig"' in page and "one MIG instance" in page


def test_a_bad_workload_class_on_the_page_names_the_field(client):
    page = client.get(compose_url(**{"w1-name": "x", "w1-kind": "training", "w1-replicas": "-1",
                                     "w1-gpus_per_replica": "1", "w1-gpu_memory_gib": "10"})).content.decode()
    cell = page.split('name="w1-replicas"', 1)[1].split("</td>", 1)[0]
    assert "greater than or equal to 1" in cell, "the refusal sits in the Replicas column of that class"
    assert "workloads[0].replicas" not in page


def test_impossible_constraints_say_why_no_stack_exists(client):
    page = client.get(compose_url(profile="training", isolation="hard", goal="throughput_first", require="time-slicing")).content.decode()
    assert "No stack satisfies these constraints" in page
    assert "time-slicing is required but cannot take part" in page


def test_saving_a_composed_stack_gives_it_a_page(client, architect):
    client.force_login(architect)
    page = client.get(compose_url()).content.decode()
    request_json = html.unescape(re.search(r'name="request" value="([^"]+)"', page).group(1))
    response = client.post("/stacks/save/", {"request": request_json, "rank": "1", "name": "Inference stack"})
    assert response.status_code == 302
    stack = Stack.objects.get(name="Inference stack")
    assert stack.profile == "online_inference"
    assert json.loads(request_json)["profile"] == "online_inference"
    detail = client.get(f"/stacks/{stack.pk}/").content.decode()
    assert "Inference stack" in detail and "Contract checks" in detail and "Run simulation" in detail
    assert "Inference stack" in client.get("/stacks/").content.decode()


def test_a_reader_cannot_save_a_stack(client, reader):
    client.force_login(reader)
    response = client.post("/stacks/save/", {"request": json.dumps({"profile": "training"}), "rank": "1"})
    assert response.status_code == 403
    assert not Stack.objects.exists()


def test_saving_garbage_is_refused_with_a_message_not_a_500(client, architect):
    client.force_login(architect)
    response = client.post("/stacks/save/", {"request": "{not json", "rank": "x"}, follow=True)
    assert response.status_code == 200
    assert "not understood" in response.content.decode()
    response = client.post("/stacks/save/", {"request": json.dumps({"profile": "quantum"}), "rank": "1"}, follow=True)
    assert "profile" in response.content.decode()
    assert not Stack.objects.exists()


def test_asking_kueue_to_raise_gpu_utilisation_is_flagged_with_the_owning_layer(client):
    fragment = client.get("/projects/kueue/misuse/?capability=raise-per-gpu-utilisation", **HTMX).content.decode()
    assert "Misuse:" in fragment and "L4" in fragment and "Ask instead" in fragment


def test_asking_volcano_for_gang_scheduling_is_the_right_layer(client):
    fragment = client.get("/projects/volcano/misuse/?capability=gang-scheduling", **HTMX).content.decode()
    assert "Right layer:" in fragment


def test_unknown_capability_is_named_in_the_error(client):
    fragment = client.get("/projects/volcano/misuse/?capability=teleport", **HTMX).content.decode()
    assert "capability" in fragment and "teleport" in fragment


def test_rank_by_evidence_from_the_compose_page_shows_progress_then_the_ranking(client, architect, django_capture_on_commit_callbacks):
    from placement.evidence.models import SimulationRun
    from placement.evidence.services.runs import simulation_execute

    client.force_login(architect)
    row = {"w1-name": "chat", "w1-kind": "online_inference", "w1-replicas": "8", "w1-gpus_per_replica": "0.25",
           "w1-gpu_memory_gib": "12", "w1-p99_ms": "150", "w1-tenants": "2"}
    page = client.get(compose_url(profile="", gpu_count="8", **row)).content.decode()
    assert 'id="rank-by-evidence"' in page
    request_json = page.split('name="request" value="', 1)[1].split('"', 1)[0].replace("&quot;", '"')
    with django_capture_on_commit_callbacks():
        response = client.post("/evaluations/", {"request": request_json, "top": "2"})
    assert response.status_code == 302
    url = response["Location"]
    waiting = client.get(url).content.decode()
    assert "hx-trigger=\"every 2s\"" in waiting and "<progress" in waiting
    for run in SimulationRun.objects.all():
        simulation_execute(run.pk)
    done = client.get(url).content.decode()
    assert "hx-trigger" not in done and "SLO attainment" in done and "/ 150 ms" in done
    # a verdict: titled by the request's classes, best first, the winner in green with the next steps
    assert "<h1>Evidence ranking: chat</h1>" in done and "mixed" not in done.split("<h1>", 1)[1].split("</h1>", 1)[0]
    body = done.split("<tbody>", 1)[1]
    assert body.index('<tr class="winner">') < body.index("</tr>"), "the evidence winner is the first row"
    assert 'class="bad"' not in body
    assert "Evidence winner:" in done and f'action="{url}decide/"' in done and "Deploy the winner</button>" in done
    assert "<dt>Queue wait P95</dt>" in done
    assert not re.search(r">\d{4,} s</td>", body), "queue waits in hours and minutes, not raw seconds"


def test_compose_results_are_one_comparison_table_with_details_folded(client):
    row = {"w1-name": "chat", "w1-kind": "online_inference", "w1-replicas": "8", "w1-gpus_per_replica": "0.25",
           "w1-gpu_memory_gib": "12", "w1-p99_ms": "150", "w1-tenants": "2"}
    page = client.get(compose_url(profile="", gpu_count="32", **row)).content.decode()
    table = page.split('<table class="list compose-comparison">', 1)[1].split("</table>", 1)[0]
    ranks = re.findall(r'<a href="#stack-(\d+)">', table)
    assert ranks and ranks == [str(i) for i in range(1, len(ranks) + 1)]
    assert "hold</td>" in table and "What sets it apart" in table
    # each stack's slots, contracts and score are folded, none open by default
    assert page.count('<details class="stack-card" id="stack-') == len(ranks)
    assert '<details class="stack-card" id="stack-1" open>' not in page
    assert "<summary>Contract checks (" in page
    # human words on the page: no API slot names or slugs as labels
    assert ">workload_unit<" not in page and ">device_handoff<" not in page


def test_the_comparison_names_what_sets_each_stack_apart_and_the_ties():
    from placement.decisions.selectors.board import stack_comparison
    from placement.rules.models import Stack as RankedStack

    def ranked(rank, score, components):
        return RankedStack.model_validate({
            "rank": rank, "score": score, "title": f"s{rank}", "slots": [], "supporting": [], "pools": [], "contracts": [],
            "score_breakdown": [{"factor": "capability", "points": 3, "reason": "gang"}, {"factor": "capability", "points": 3, "reason": "gang"},
                                {"factor": "component_cost", "points": -1, "reason": "cost"}],
            "capabilities": [], "components": components, "why_rank": ""})

    rows = stack_comparison([ranked(1, 20, ["volcano", "mig"]), ranked(2, 20, ["volcano", "mig", "resource-quota"]), ranked(3, 19, ["volcano"])])
    assert [r.differs for r in rows] == [["mig"], ["mig", "resource-quota"], []]
    assert rows[0].tie_with == [2] and rows[2].tie_with == []
    assert rows[0].reasons == ["+6: gang", "-1: cost"], "a reason counted twice is shown once with its total"


def test_a_blank_memory_is_said_next_to_the_field_in_the_forms_words(client):
    row = {"w1-name": "chat", "w1-kind": "online_inference", "w1-replicas": "8", "w1-gpus_per_replica": "0.25", "w1-gpu_memory_gib": ""}
    page = client.get(compose_url(profile="", gpu_count="32", **row)).content.decode()
    assert "Required for a class with a name: The GPU memory one replica needs, in GiB." in page
    assert "gpu_memory_gib" not in page.split('id="compose-result"', 1)[1], "no API path in the answer"
    assert "Input should be a valid number" not in page


def test_memory_per_replica_derives_the_share_and_says_so(client):
    row = {"w1-name": "chat", "w1-kind": "online_inference", "w1-replicas": "8", "w1-gpus_per_replica": "", "w1-gpu_memory_gib": "20"}
    page = client.get(compose_url(profile="", gpu_count="32", gpu_model="A100-80GB", **row)).content.decode()
    assert "chat: 20 GiB of a 80 GB A100-80GB is a 0.25 share per replica." in page
    assert "ranked stack" in page


def test_an_engine_refusal_lands_on_the_column_of_the_class_it_is_about(client):
    row = {"w1-name": "big", "w1-kind": "training", "w1-replicas": "2", "w1-gpus_per_replica": "1.5", "w1-gpu_memory_gib": "20"}
    page = client.get(compose_url(profile="", gpu_count="32", **row)).content.decode()
    cell = page.split('name="w1-gpus_per_replica"', 1)[1].split("</td>", 1)[0]
    assert "above 1 GPU a replica uses whole GPUs" in cell


def test_why_not_speaks_the_pages_words_and_requires_a_project_with_one_click(client):
    """Issue 36: 'why not' answered in API syntax (constraints.require: [kueue]) instead of the page's picker."""
    page = client.get(compose_url()).content.decode()
    why = page.split('<details id="why-not">', 1)[1].split("</details>", 1)[0]
    assert "constraints.require" not in why and "_policy" not in why and "device_handoff" not in why
    link = re.search(r'<a href="(/compose/\?[^"]+&amp;require=([a-z0-9-]+))">Compose with it required</a>', why)
    assert link, "a project that ranked lower can be required from its answer"
    required = client.get(html.unescape(link.group(1))).content.decode()
    assert f'value="{link.group(2)}" selected' in required or f'value="{link.group(2)}" checked' in required
