# A server for the stream property test: it answers requests now or later, in
# any order, with either key order and results of up to 2 MiB, writes
# notifications in between, and dies now and then, sometimes in the middle of
# an answer. Its choices come from the seed in argv[1] and the run's pid.
import json, os, random, sys

rng = random.Random(int(sys.argv[1]) * 100003 + os.getpid())
out = sys.stdout.buffer
deferred = []


def answer(req):
    size = rng.choice([10, 100, 1000, 50000]) if rng.random() < 0.95 else rng.randint(1 << 20, 2 << 20)
    result = json.dumps({"content": [{"type": "text", "text": "x" * size}]})
    rid = json.dumps(req["id"])
    if size < (1 << 20) and rng.random() < 0.5:
        line = '{"result":%s,"jsonrpc":"2.0","id":%s}' % (result, rid)  # the id last, as the TypeScript SDK writes
    else:
        line = '{"jsonrpc":"2.0","id":%s,"result":%s}' % (rid, result)
    return line.encode() + b"\n"


def maybe_die():
    if rng.random() < 0.03:
        if deferred and rng.random() < 0.5:
            half = answer(deferred[0])
            out.write(half[: len(half) // 2])  # torn: the client must never see half of it glued to anything
        out.flush()
        os._exit(1)


for raw in sys.stdin.buffer:
    try:
        msg = json.loads(raw)
    except ValueError:
        continue
    if msg.get("method") == "flush":  # the client is waiting: answer everything
        for req in deferred:
            out.write(answer(req))
        deferred = []
        out.flush()
        continue
    if "id" not in msg or "method" not in msg:
        continue
    if msg["method"] == "initialize":
        out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "flaky", "version": "1"}}}).encode() + b"\n")
        out.flush()
        continue
    deferred.append(msg)
    rng.shuffle(deferred)
    while deferred and rng.random() < 0.6:
        out.write(answer(deferred.pop()))
    if rng.random() < 0.3:
        out.write(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"busy"}}\n')
    out.flush()
    maybe_die()

# The client left: what is still owed is answered before a clean exit.
for req in deferred:
    out.write(answer(req))
out.flush()
