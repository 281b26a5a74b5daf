// slow-clients.mjs -- the connection-exhaustion attacker of
// test-conn-guard.sh: COUNT connections from a source address of its own
// (127.0.0.2 is loopback on Linux too), each sending a partial request
// and then one more header byte every INTERVAL ms, as a slowloris client
// does. It watches what the server does with each connection and prints
// one JSON summary on stdout:
//   {"opened", "refused" (closed by the server within 1 s),
//    "held" (open longer), "held_closed_ms" (when each held one was
//    closed, ms after it connected; null while still open),
//    "trickled_max" (bytes the longest-held one sent after its first)}
// usage: node slow-clients.mjs --port P --from ADDR --count N
//        [--interval-ms 500] [--watch-ms 8000]
import net from 'node:net';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
    return acc;
  }, []),
);
const port = Number(args.port);
const from = args.from ?? '127.0.0.2';
const count = Number(args.count ?? 100);
const interval = Number(args['interval-ms'] ?? 500);
const watch = Number(args['watch-ms'] ?? 8000);
if (!port || !count) {
  console.error('usage: slow-clients.mjs --port P --from ADDR --count N');
  process.exit(2);
}

const conns = [];
for (let i = 0; i < count; i++) {
  const c = { connected: null, closed: null, trickled: 0 };
  conns.push(c);
  const s = net.connect({ port, host: '127.0.0.1', localAddress: from });
  c.sock = s;
  s.on('connect', () => {
    c.connected = Date.now();
    s.write('GET /api/teams HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
  });
  s.on('data', () => {}); // whatever the server says, it is not a 200 yet
  s.on('error', () => {});
  s.on('close', () => {
    c.closed = Date.now();
  });
}

const ticker = setInterval(() => {
  for (const c of conns)
    if (c.connected !== null && c.closed === null && !c.sock.destroyed) {
      c.sock.write('a');
      c.trickled++;
    }
}, interval);

setTimeout(() => {
  clearInterval(ticker);
  const out = { opened: 0, refused: 0, held: 0, held_closed_ms: [], trickled_max: 0 };
  for (const c of conns) {
    if (c.connected === null) continue;
    out.opened++;
    const end = c.closed ?? Date.now();
    if (c.closed !== null && end - c.connected < 1000) {
      out.refused++;
      continue;
    }
    out.held++;
    out.held_closed_ms.push(c.closed === null ? null : c.closed - c.connected);
    out.trickled_max = Math.max(out.trickled_max, c.trickled);
  }
  console.log(JSON.stringify(out));
  for (const c of conns) c.sock.destroy();
  process.exit(0);
}, watch);
