#!/usr/bin/env python3
"""Drives subdesk-http directly over its wire (HelperWire's frames on a socket that is its
stdin and stdout): N POSTs to URL, 8 in flight, as a deliverer sends them. Prints the rate,
the helper's CPU time per request and its resident memory every 10,000 requests.

    python3 bench/helper-wire-load.py .build/release/subdesk-http http://127.0.0.1:8089/in0 70000
"""
import os, socket, struct, subprocess, sys, time

if len(sys.argv) != 4:
    sys.exit(__doc__)
helper, url, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
ours, theirs = socket.socketpair()
process = subprocess.Popen([helper], stdin=theirs.fileno(), stdout=theirs.fileno(), close_fds=True)
theirs.close()

def field(data):
    return struct.pack('>I', len(data)) + data

def request(i):
    body = b'{"signedPayload":"x"}' * 10
    frame = (struct.pack('>QIII', i, 10_000, 8, 65_536) + field(b'POST') + field(url.encode())
             + field(b'Content-Type: application/json\nSubdesk-Delivery: bench/t0\n') + field(body))
    return struct.pack('>I', len(frame)) + frame

def read(n):
    out = b''
    while len(out) < n:
        chunk = ours.recv(n - len(out))
        if not chunk:
            sys.exit('the helper closed its socket')
        out += chunk
    return out

def resident_kb():
    for line in open(f'/proc/{process.pid}/status'):
        if line.startswith('VmRSS'):
            return int(line.split()[1])

sent = answered = ok = 0
samples = []
started = time.time()
while sent < min(8, count):
    ours.sendall(request(sent)); sent += 1
while answered < count:
    frame = read(struct.unpack('>I', read(4))[0])
    ok += struct.unpack('>i', frame[8:12])[0] == 200
    answered += 1
    if sent < count:
        ours.sendall(request(sent)); sent += 1
    if answered % 10_000 == 0:
        samples.append((answered, resident_kb()))
seconds = time.time() - started
fields = open(f'/proc/{process.pid}/stat').read().rsplit(')', 1)[1].split()
cpu = (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
print(f'{count} requests, {ok} answered 200, {count / seconds:.0f}/s, helper CPU {cpu * 1e6 / count:.0f} us/request')
print('resident kB after N requests:', ', '.join(f'{n}: {kb}' for n, kb in samples))
ours.close()
process.wait()
