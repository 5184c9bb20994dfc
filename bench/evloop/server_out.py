"""The reader of bench/evloop/server's report (server.c says what it prints): the
workers' CPU and wall time by thread id, and handle_request's share of the threads'
CPU time. bench/evloop/run.py and tests/runtime/test_event_loop.py read it here."""


def parse(out):
    """{"workers": {tid: CPU/wall}, "work_share": handle_request's share of the CPU
    time of every thread (the workers and main)} of the server's stdout."""
    workers, cpu, work = {}, 0, 0
    for line in out.splitlines():
        w = line.split()
        if not w or w[0] not in ("thread", "main"):
            continue
        kv = dict(x.split("=") for x in w[1:] if "=" in x)
        cpu += int(kv["cpu_ns"])
        work += int(kv.get("work_ns", 0))
        if w[0] == "thread":
            workers[int(kv["tid"])] = int(kv["cpu_ns"]) / int(kv["wall_ns"])
    return {"workers": workers, "work_share": work / cpu if cpu else 0.0}
