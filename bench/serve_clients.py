#!/usr/bin/env python3
"""Hostile and greedy clients for `tracetable serve` (loopback only, bounded).

  serve_clients.py --port P --table NAME hostile [--idle 1000] [--slow 100] [--seconds 20]
  serve_clients.py --port P --table NAME greedy [--clients 64] [--requests 50]

hostile: holds --idle connected-but-silent connections and --slow connections
that send one header byte a second (both reopened when the server closes
them), and meanwhile probes /healthz and small windows one at a time; prints
p50/p99/max per probe kind, errors, and how many held connections were open.

greedy: --clients keep-alive clients, each sending --requests mixed requests
(healthz, small/medium/whole windows, search, event, stats) as fast as
answers come; prints each client's time to its first answer (max), latency
percentiles, and errors (anything but 200, or no answer).

With --pid, samples the server's RSS every 100 ms; prints the peak.
Prints one JSON object on stdout (--json FILE also writes it). Python
standard library only.
"""
import argparse
import http.client
import json
import random
import resource
import selectors
import socket
import sys
import threading
import time

HOST = "127.0.0.1"


def pct(values, p):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def summary(values):
    return {"n": len(values), "p50_ms": pct(values, 50), "p99_ms": pct(values, 99),
            "max_ms": max(values) if values else None}


class RssSampler(threading.Thread):
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak_kb, self.stop = pid, 0, False

    def run(self):
        while not self.stop:
            try:
                with open(f"/proc/{self.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            self.peak_kb = max(self.peak_kb, int(line.split()[1]))
            except OSError:
                return
            time.sleep(0.1)


def table_span(port, table):
    c = http.client.HTTPConnection(HOST, port, timeout=30)
    c.request("GET", f"/api/tables/{table}")
    t = json.loads(c.getresponse().read())
    c.close()
    return float(t["start_us"]), float(t["end_us"])


def window_path(table, start, end, frac, rnd, res_bins=2000):
    width = (end - start) * frac
    a = start + rnd.random() * max(0.0, (end - start) - width)
    return (f"/api/tables/{table}/window?start_us={a:.3f}&end_us={a + width:.3f}"
            f"&resolution_us={max(width / res_bins, 0.001):.6f}")


class Holder(threading.Thread):
    """Keeps `idle` silent and `slow` trickling connections open."""

    def __init__(self, port, idle, slow):
        super().__init__(daemon=True)
        self.port, self.want_idle, self.want_slow = port, idle, slow
        self.sel = selectors.DefaultSelector()
        self.conns = {}  # socket -> kind
        self.stop = False
        self.reopened = 0
        self.open_min = None

    def open(self, kind):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect_ex((HOST, self.port))
        except OSError:
            s.close()
            return
        self.conns[s] = kind
        self.sel.register(s, selectors.EVENT_READ)
        if kind == "slow":
            try:
                s.send(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
            except OSError:
                pass

    def count(self):
        return sum(1 for k in self.conns.values() if k == "idle"), sum(1 for k in self.conns.values() if k == "slow")

    def fill(self):
        i, s = self.count()
        for _ in range(self.want_idle - i):
            self.open("idle")
        for _ in range(self.want_slow - s):
            self.open("slow")

    def run(self):
        self.fill()
        last_trickle = time.time()
        while not self.stop:
            for key, _ in self.sel.select(timeout=0.2):
                s = key.fileobj
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                if not data:  # closed by the server (timeout): reopen
                    self.sel.unregister(s)
                    del self.conns[s]
                    s.close()
                    self.reopened += 1
            if time.time() - last_trickle >= 1.0:
                last_trickle = time.time()
                for s, kind in list(self.conns.items()):
                    if kind == "slow":
                        try:
                            s.send(b"X")
                        except OSError:
                            pass
            self.fill()
            n = len(self.conns)
            self.open_min = n if self.open_min is None else min(self.open_min, n)
        for s in list(self.conns):
            s.close()


def hostile(args):
    start, end = table_span(args.port, args.table)
    holder = Holder(args.port, args.idle, args.slow)
    holder.start()
    time.sleep(2.0)  # let every held connection reach the server
    held_at_start = holder.count()
    rnd = random.Random(1)
    lat = {"healthz": [], "small_window": []}
    errors = 0
    t_end = time.time() + args.seconds
    k = 0
    while time.time() < t_end:
        kind = "healthz" if k % 2 == 0 else "small_window"
        path = "/healthz" if kind == "healthz" else window_path(args.table, start, end, 0.0001, rnd)
        k += 1
        t0 = time.perf_counter()
        try:
            c = http.client.HTTPConnection(HOST, args.port, timeout=30)
            c.request("GET", path, headers={"Accept-Encoding": "gzip"})
            r = c.getresponse()
            r.read()
            c.close()
            if r.status != 200:
                errors += 1
        except OSError:
            errors += 1
            continue
        lat[kind].append((time.perf_counter() - t0) * 1000)
        time.sleep(0.02)
    holder.stop = True
    holder.join()
    return {"mode": "hostile", "idle": args.idle, "slow": args.slow, "seconds": args.seconds,
            "held_at_start": {"idle": held_at_start[0], "slow": held_at_start[1]},
            "held_min": holder.open_min, "reopened": holder.reopened, "errors": errors,
            "healthz": summary(lat["healthz"]), "small_window": summary(lat["small_window"])}


def greedy(args):
    start, end = table_span(args.port, args.table)
    first, lat, errors, statuses, by_kind, first_by_kind = [], [], [0], {}, {}, {}
    lock = threading.Lock()
    go = threading.Event()

    def client(i):
        rnd = random.Random(i)
        c = http.client.HTTPConnection(HOST, args.port, timeout=60)
        go.wait()
        t_start = time.perf_counter()
        for n in range(args.requests):
            r = rnd.random()
            if r < 0.2:
                path, kind = "/healthz", "healthz"
            elif r < 0.55:
                path, kind = window_path(args.table, start, end, 0.0001, rnd), "window_0.0001"
            elif r < 0.75:
                path, kind = window_path(args.table, start, end, 0.01, rnd), "window_0.01"
            elif r < 0.85:
                path, kind = window_path(args.table, start, end, 1.0, rnd), "window_1"
            elif r < 0.93:
                path, kind = f"/api/tables/{args.table}/search?q=fusion&limit=50", "search"
            elif r < 0.97:
                path, kind = f"/api/tables/{args.table}/event?id={rnd.randrange(1000)}", "event"
            else:
                # every event of 1% of the span: a heavy call
                a = start + rnd.random() * (end - start) * 0.99
                path = (f"/api/tables/{args.table}/window?start_us={a:.3f}"
                        f"&end_us={a + (end - start) * 0.01:.3f}&resolution_us=0")
                kind = "window_0.01_res0"
            t0 = time.perf_counter()
            status = None
            for attempt in range(2):
                try:
                    c.request("GET", path, headers={"Accept-Encoding": "gzip"})
                    resp = c.getresponse()
                    resp.read()
                    status = resp.status
                    break
                except (OSError, http.client.HTTPException):
                    c.close()
                    c = http.client.HTTPConnection(HOST, args.port, timeout=60)
            now = time.perf_counter()
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
                # event 404s are answers (ids without arguments), not errors
                if status not in (200, 404):
                    errors[0] += 1
                lat.append((now - t0) * 1000)
                k = by_kind.setdefault(kind, {"ms": [], "statuses": {}})
                k["ms"].append((now - t0) * 1000)
                k["statuses"][str(status)] = k["statuses"].get(str(status), 0) + 1
                if n == 0:
                    first.append((now - t_start) * 1000)
                    first_by_kind.setdefault(kind, []).append((now - t_start) * 1000)
        c.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    go.set()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return {"mode": "greedy", "clients": args.clients, "requests_each": args.requests,
            "wall_s": round(wall, 2), "requests_per_s": round(len(lat) / wall, 1),
            "first_answer": summary(first),
            "first_answer_by_kind": {k: summary(v) for k, v in sorted(first_by_kind.items())},
            "latency": summary(lat), "errors": errors[0],
            "statuses": {str(k): v for k, v in statuses.items()},
            "by_kind": {k: dict(summary(v["ms"]), statuses=v["statuses"]) for k, v in sorted(by_kind.items())}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--pid", type=int)
    ap.add_argument("--json")
    sub = ap.add_subparsers(dest="mode", required=True)
    h = sub.add_parser("hostile")
    h.add_argument("--idle", type=int, default=1000)
    h.add_argument("--slow", type=int, default=100)
    h.add_argument("--seconds", type=float, default=20)
    g = sub.add_parser("greedy")
    g.add_argument("--clients", type=int, default=64)
    g.add_argument("--requests", type=int, default=50)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sampler = RssSampler(args.pid) if args.pid else None
    if sampler:
        sampler.start()
    out = hostile(args) if args.mode == "hostile" else greedy(args)
    if sampler:
        sampler.stop = True
        sampler.join()
        out["server_peak_rss_mb"] = round(sampler.peak_kb / 1024, 1)
    text = json.dumps(out)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
