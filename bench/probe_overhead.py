"""Does running `sgmon probe` on a Data Guard link change what the link's own traffic sees?

Builds the lab (root), then measures the same link twice for ``--seconds`` each: the lab's SYNC
workload alone, then with a probe (fastsync, paced by ``--rate``) running beside it between the
same namespaces.  Prints the workload's SYNC Remote Write average and the DG socket's rtt as
``ss -tin`` shows it in both phases, the probe's own rtt (TCP_INFO) next to ss's, and the ratios;
the target is every ratio within 10 % of 1.

    sudo python bench/probe_overhead.py --seconds 15 --rounds 2 --rate 2
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import threading

from sgmon.lab.run import Lab, LabOptions

PORT = 46660
RTT = re.compile(r"\brtt:([\d.]+)/")


def ss_rtt(lab: Lab, port: int, stop: threading.Event, out: list[float]) -> None:
    """Sample the rtt of the sockets to ``port`` from ``ss -tin`` in the primary, twice a second."""
    while not stop.wait(0.5):
        text = lab.pair.run("a", "ss", "-tinH", "dst", f"{lab.pair.b_ip}:{port}", check=False)
        out += [float(m) for m in RTT.findall(text)]


def phase(lab: Lab, source, seconds: float, probe: bool, rate: float) -> dict:
    """One measurement window; with ``probe``, a probe client runs through it."""
    stop = threading.Event()
    dg: list[float] = []
    probe_ss: list[float] = []
    samplers = [threading.Thread(target=ss_rtt, args=(lab, lab.opts.port, stop, dg))]
    if probe:
        samplers.append(threading.Thread(target=ss_rtt, args=(lab, PORT, stop, probe_ss)))
    client = None
    if probe:
        client = lab.spawn(
            "a", "sgmon", "probe", "client", f"{lab.pair.b_ip}:{PORT}", "--mode", "fastsync",
            "--duration", f"{seconds}s", "--interval", "1s", "--rate", str(rate),
            "--format", "json", stdout=subprocess.PIPE,
        )  # fmt: skip
    for t in samplers:
        t.start()
    frames = source.frames(seconds)
    stop.set()
    for t in samplers:
        t.join()
    srw = [
        f.value("oracle_waits", "SYNC Remote Write", "avg") for f in frames if f.host == "primary"
    ]
    out = {
        "srw_ms": statistics.mean(v for v in srw if v is not None),
        "dg_ss_rtt_ms": statistics.median(dg) if dg else None,
    }
    if client is not None:
        text, _ = client.communicate(timeout=seconds + 15)
        rows = [json.loads(line) for line in text.splitlines()]
        summ = rows[-1]
        rtts = [r["rtt_ms"] for r in rows[:-1] if r.get("rtt_ms") is not None]
        out["probe_rtt_ms"] = statistics.median(rtts)
        out["probe_ss_rtt_ms"] = statistics.median(probe_ss) if probe_ss else None
        out["probe_fastsync_ms"] = summ["lat_avg_ms"]
    return out


def main() -> int:
    """Run both phases and print the ratios."""
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=15)
    p.add_argument("--rounds", type=int, default=2, help="alternations of the two phases")
    p.add_argument("--rate", type=float, default=2.0, help="probe rate, Mbytes/s")
    a = p.parse_args()
    total = 2 * a.rounds * (a.seconds + 5) + 40
    with Lab(LabOptions(duration=total)) as lab:
        lab.spawn(
            "b", "sgmon", "probe", "server", "--listen", f"{lab.pair.b_ip}:{PORT}",
            "--duration", str(total),
        )  # fmt: skip
        source = lab.source()
        source.frames(5)  # warm-up
        runs: dict[bool, list[dict]] = {False: [], True: []}
        for _ in range(a.rounds):  # alternate, so drift in the machine's load hits both alike
            for probe in (False, True):
                runs[probe].append(phase(lab, source, a.seconds, probe, a.rate))
        source.close()
    alone, both = (
        {k: statistics.mean(r[k] for r in runs[p]) for k in runs[p][0]} for p in (False, True)
    )
    for name, r in (("lab alone ", alone), ("with probe", both)):
        print(f"{name}: SYNC Remote Write {r['srw_ms']:.3f} ms, ss rtt {r['dg_ss_rtt_ms']:.4f} ms")
    print(
        f"probe     : TCP_INFO rtt {both['probe_rtt_ms']:.4f} ms, ss rtt "
        f"{both['probe_ss_rtt_ms']:.4f} ms, fastsync latency {both['probe_fastsync_ms']:.3f} ms"
    )
    ratios = {
        "workload SRW with/without probe": both["srw_ms"] / alone["srw_ms"],
        "DG socket ss rtt with/without probe": both["dg_ss_rtt_ms"] / alone["dg_ss_rtt_ms"],
        "probe TCP_INFO rtt / ss rtt of the probe socket": both["probe_rtt_ms"]
        / both["probe_ss_rtt_ms"],
    }
    for name, r in ratios.items():
        print(f"{name:<50} {r:6.3f}  {'ok' if abs(r - 1) <= 0.10 else 'OUTSIDE 10 %'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
