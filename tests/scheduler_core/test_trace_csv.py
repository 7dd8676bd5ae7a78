"""Reading job/pod/node CSVs: column maps for the known formats and precise errors."""

import pytest

from scheduler_core.traces import ColumnMap, TraceError, load_jobs, load_nodes


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_philly_columns_map_to_whole_gpu_jobs_sorted_by_submit(tmp_path):
    p = write(tmp_path, "jobs.csv",
              "job_id,submit_s,num_gpus,job_type,total_steps,duration_s\n"
              "0,50.0,4,ResNet-50,100,1000.5\n"
              "1,10.0,1,LM,10,20\n"
              "2,10.0,8,Transformer,10,30\n")
    jobs = load_jobs(p, "philly", require_duration=True)
    assert [j.job_id for j in jobs] == ["1", "2", "0"]  # by submit, ties in file order
    assert [j.index for j in jobs] == [0, 1, 2]
    assert [(j.num_gpus, j.gpu_milli) for j in jobs] == [(1, 1000), (8, 1000), (4, 1000)]
    assert jobs[2].duration_s == 1000.5 and jobs[2].line == 2
    assert jobs[0].tenant == "default"


def test_alibaba_duration_is_deletion_minus_scheduled_else_creation(tmp_path):
    p = write(tmp_path, "pods.csv",
              "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
              "a,12000,16384,1,460,,LS,Running,100,1100,300\n"
              "b,6000,12288,0,0,,BE,Pending,200,700,\n"
              "c,8000,8192,2,1000,V100M16|V100M32,LS,Running,300,400,300\n")
    a, b, c = load_jobs(p, "alibaba")
    assert (a.num_gpus, a.gpu_milli, a.duration_s, a.priority_class) == (1, 460, 800.0, "LS")
    assert (a.cpu_milli, a.mem_mib) == (12000, 16384)
    assert (b.num_gpus, b.gpu_milli, b.duration_s) == (0, 0, 500.0)
    assert c.gpu_spec == ("V100M16", "V100M32")


def test_alibaba_lists_without_time_columns_arrive_in_file_order(tmp_path):
    p = write(tmp_path, "multigpu.csv",
              "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
              "x,1000,1024,8,1000\n"
              "y,1000,1024,1,250\n")
    x, y = load_jobs(p, "alibaba")
    assert (x.job_id, x.submit_s, x.duration_s) == ("x", 0.0, None)
    assert (y.job_id, y.submit_s) == ("y", 1.0)


def test_generic_fractional_gpus_become_a_milli_share(tmp_path):
    p = write(tmp_path, "g.csv",
              "job_id,submit_s,gpus,duration_s,tenant,priority_class,gpu_mem_mib\n"
              "j1,0,0.25,60,team-a,high,4096\n"
              "j2,5,2,60,team-b,low,\n")
    j1, j2 = load_jobs(p)
    assert (j1.num_gpus, j1.gpu_milli, j1.gpu_mem_mib, j1.tenant, j1.priority_class) == (1, 250, 4096, "team-a", "high")
    assert (j2.num_gpus, j2.gpu_milli, j2.gpu_mem_mib) == (2, 1000, None)


def test_custom_column_map_with_time_scale(tmp_path):
    p = write(tmp_path, "ms.csv", "id,t_ms,n,run_ms,user\nq,2000,1,500,alice\n")
    cmap = ColumnMap(job_id="id", submit="t_ms", gpus="n", duration="run_ms", tenant="user", time_scale=0.001)
    (j,) = load_jobs(p, cmap)
    assert (j.submit_s, j.duration_s, j.tenant) == (2.0, 0.5, "alice")


@pytest.mark.parametrize(
    "body, line, column, fragment",
    [
        ("0,1,two,5\n", 2, "num_gpus", "expected a number, got 'two'"),
        ("0,1,1,5\n1,-3,1,5\n", 3, "submit_s", "expected a finite number >= 0"),
        ("0,1,1,nan\n", 2, "duration_s", "finite"),
        ("0,1,1.5,5\n", 2, "num_gpus", "fractions are only allowed below one GPU"),
        ("0,1,1,\n", 2, "duration_s", "expected a duration"),
    ],
)
def test_bad_cell_error_names_file_line_and_column(tmp_path, body, line, column, fragment):
    p = write(tmp_path, "bad.csv", "job_id,submit_s,num_gpus,duration_s\n" + body)
    with pytest.raises(TraceError) as exc:
        load_jobs(p, "philly", require_duration=True)
    err = exc.value
    assert (err.line, err.column) == (line, column)
    assert str(err).startswith(f"{p}:{line}: column {column!r}:")
    assert fragment in str(err)


def test_missing_column_error_lists_the_header(tmp_path):
    p = write(tmp_path, "nocol.csv", "job_id,submit_s,duration_s\n0,0,1\n")
    with pytest.raises(TraceError, match=r"nocol.csv:1: column 'num_gpus': missing from the header \(found: job_id, submit_s, duration_s\)"):
        load_jobs(p, "philly")


def test_wrong_number_of_fields_names_the_line(tmp_path):
    p = write(tmp_path, "short.csv", "job_id,submit_s,num_gpus,duration_s\n0,0,1,5\n\n1,0,1\n")
    with pytest.raises(TraceError, match=r"short.csv:4: expected 4 fields \(as in the header\), found 3"):
        load_jobs(p, "philly")


def test_share_above_one_gpu_and_end_before_start_are_rejected(tmp_path):
    head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    p = write(tmp_path, "a.csv", head + "a,1,1,1,1500,,LS,Running,0,10,0\n")
    with pytest.raises(TraceError, match=r"a.csv:2: column 'gpu_milli': share per GPU must be <= 1000"):
        load_jobs(p, "alibaba")
    p = write(tmp_path, "b.csv", head + "a,1,1,1,500,,LS,Running,0,10,20\n")
    with pytest.raises(TraceError, match=r"b.csv:2: column 'deletion_time': ends at 10 s, before it starts at 20 s"):
        load_jobs(p, "alibaba")


def test_empty_file_header_only_and_missing_file_are_errors(tmp_path):
    with pytest.raises(TraceError, match="empty file"):
        load_jobs(write(tmp_path, "e.csv", ""), "philly")
    with pytest.raises(TraceError, match="no data rows"):
        load_jobs(write(tmp_path, "h.csv", "job_id,submit_s,num_gpus,duration_s\n"), "philly")
    with pytest.raises(TraceError, match="cannot open"):
        load_jobs(tmp_path / "absent.csv", "philly")
    with pytest.raises(ValueError, match="unknown trace format"):
        load_jobs(write(tmp_path, "x.csv", "a\n1\n"), "slurm")


def test_node_list_reads_alibaba_columns_and_needs_memory_for_unknown_models(tmp_path):
    p = write(tmp_path, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,96000,393216,8,G2\nn1,8000,32768,1,T4\n")
    n0, n1 = load_nodes(p)
    assert (n0.name, n0.num_gpus, n0.model, n0.cpu_milli) == ("n0", 8, "G2", 96000)
    assert n1.gpu_mem_mib == 16 * 1024
    p = write(tmp_path, "odd.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,2,MI300X\n")
    with pytest.raises(TraceError, match=r"odd.csv:2: column 'model': unknown GPU model 'MI300X'"):
        load_nodes(p)
    p = write(tmp_path, "ok.csv", "sn,cpu_milli,memory_mib,gpu,model,gpu_mem_mib\nn0,1,1,2,MI300X,196608\n")
    assert load_nodes(p)[0].gpu_mem_mib == 196608
