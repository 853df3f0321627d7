#!/usr/bin/env python3
"""memwatch.py - a process's memory as it works through the queue.

    memwatch.py --socket=S --database=D --jobs=N [--interval=SEC] -- CMD...

Starts CMD (a jobrun run draining N due jobs) and samples, every interval,
its VmRSS and VmHWM from /proc/PID/status and how many jobs are done (the id of the
first job still pending, read on idx_pick: the jobs share one next_run_at,
so they go in id order).  Halfway it reads /proc/PID/smaps to see what the
resident pages are.  The peak is the last VmHWM read (the high-water mark
of the process since its exec; wait4's ru_maxrss would count the forked
Python before the exec).

Prints key=value lines: peak_kb, rss_at_<k>0k_kb for each 10 k jobs done,
growth_kb_per_10k (least-squares slope of VmRSS against jobs done, over the
samples after the first 10 % of the jobs), rss_first_kb / rss_last_kb
(first and last sample after that warm-up), samples, seconds, and the
smaps breakdown at halfway: anon_kb, file_kb and map.<name>_kb for the
largest mappings.
"""
import os
import subprocess
import sys
import time


def sql(sock, db, query):
    out = subprocess.run(
        ["mariadb", "--no-defaults", "-S", sock, "-uroot", "-N", "-B", db,
         "-e", query], check=True, capture_output=True, text=True).stdout
    return out.strip()


def rss_kb(pid):
    """VmRSS and VmHWM (the peak so far), or None once it is gone."""
    got = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    got[line[:5]] = int(line.split()[1])
    except OSError:
        return None
    return (got["VmRSS"], got["VmHWM"]) if len(got) == 2 else None


def smaps(pid):
    """Resident kB per mapping name, and anonymous / file-backed totals."""
    per, anon, filed, name = {}, 0, 0, ""
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                first = line.split(maxsplit=1)[0]
                if "-" in first and not first.endswith(":"):
                    parts = line.split()
                    name = parts[5] if len(parts) > 5 else "[anon]"
                elif first == "Rss:":
                    kb = int(line.split()[1])
                    short = os.path.basename(name) if "/" in name else name
                    per[short] = per.get(short, 0) + kb
                    if name.startswith("/"):
                        filed += kb
                    else:
                        anon += kb
    except OSError:
        return None
    return per, anon, filed


def main():
    args = sys.argv[1:]
    opts = {"interval": "0.2"}
    while args and args[0] != "--":
        k, _, v = args.pop(0).lstrip("-").partition("=")
        opts[k] = v
    if not args or not {"socket", "database", "jobs"} <= opts.keys():
        sys.exit(__doc__)
    cmd = args[1:]
    sock, db, total = opts["socket"], opts["database"], int(opts["jobs"])
    interval = float(opts["interval"])
    first_id = int(sql(sock, db, "SELECT MIN(id) FROM polling_jobs"))
    pending_q = ("SELECT id FROM polling_jobs FORCE INDEX (idx_pick) "
                 "WHERE status = 'pending' ORDER BY next_run_at, id LIMIT 1")

    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    samples, breakdown, peak = [], None, 0
    while proc.poll() is None:
        time.sleep(interval)
        got = rss_kb(proc.pid)
        if got is None:
            break
        rss, peak = got[0], max(peak, got[1])
        first = sql(sock, db, pending_q)
        done = total if first == "" else int(first) - first_id
        samples.append((done, rss))
        if breakdown is None and done >= total // 2:
            breakdown = smaps(proc.pid)
    # Not wait4's ru_maxrss: that counts the forked Python before exec.
    # poll() has reaped the child when it ended between a sample and the
    # next poll(); wait4 would then find no child.
    if proc.returncode is None:
        _, status, _ = os.wait4(proc.pid, 0)
        ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    else:
        status = proc.returncode
        ok = status == 0
    seconds = time.monotonic() - start
    if not ok:
        sys.exit(f"memwatch: {cmd[0]} failed (status {status})")

    out = {"peak_kb": peak, "samples": len(samples),
           "seconds": f"{seconds:.1f}"}
    step = 10000
    for k in range(step, total + 1, step):
        at = [rss for done, rss in samples if done >= k]
        if at:
            out[f"rss_at_{k // 1000}k_kb"] = at[0]
    warm = [(d, r) for d, r in samples if d >= total // 10]
    if len(warm) >= 2:
        n = len(warm)
        mx = sum(d for d, _ in warm) / n
        my = sum(r for _, r in warm) / n
        sxx = sum((d - mx) ** 2 for d, _ in warm)
        sxy = sum((d - mx) * (r - my) for d, r in warm)
        slope = sxy / sxx if sxx else 0.0
        out["growth_kb_per_10k"] = f"{slope * step:.2f}"
        out["rss_first_kb"] = warm[0][1]
        out["rss_last_kb"] = warm[-1][1]
    if breakdown is not None:
        per, anon, filed = breakdown
        out["anon_kb"] = anon
        out["file_kb"] = filed
        for name, kb in sorted(per.items(), key=lambda x: -x[1])[:12]:
            out[f"map.{name or '[anon]'}_kb"] = kb
    for k, v in out.items():
        print(f"{k}={v}")


if __name__ == "__main__":
    main()
