#!/usr/bin/env python3
"""POSTs each line of an NDJSON file to URL from CLIENTS threads, one kept HTTP/1.1
connection each (http.client), and prints: requests, seconds, requests/s, median ms,
and how many were not answered 200. The load generator of bench/serve-through-lighttpd.sh."""
import http.client, statistics, sys, threading, time, urllib.parse

url, path, clients = sys.argv[1], sys.argv[2], int(sys.argv[3])
parts = urllib.parse.urlsplit(url)
bodies = [line.rstrip(b"\n") for line in open(path, "rb") if line.strip()]
lock, position, times, failures = threading.Lock(), [0], [], [0]

def client():
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    while True:
        with lock:
            index = position[0]
            position[0] += 1
        if index >= len(bodies):
            return
        started = time.perf_counter()
        try:
            connection.request("POST", parts.path, body=bodies[index], headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            ok = response.status == 200
        except Exception:
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
            ok = False
        elapsed = (time.perf_counter() - started) * 1000
        with lock:
            if ok:
                times.append(elapsed)
            else:
                failures[0] += 1

started = time.perf_counter()
threads = [threading.Thread(target=client) for _ in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
seconds = time.perf_counter() - started
print(f"{len(times)} requests in {seconds:.2f} s: {len(times) / seconds:.0f}/s, median {statistics.median(times):.2f} ms, not 200: {failures[0]}")
