// Opens a TCP connection to the host and port its input names; prints {connected: true} if that works, and
// lets the socket error escape otherwise (outcome 'denied' inside an empty network namespace: ENETUNREACH).
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
const { host, port } = JSON.parse(readFileSync(process.env.WMRL_INPUT, 'utf8'));
const socket = connect({ host, port, timeout: 3000 });
socket.on('connect', () => {
  console.log(JSON.stringify({ connected: true }));
  socket.end();
});
socket.on('timeout', () =>
  socket.destroy(Object.assign(new Error(`connect to ${host}:${port} timed out`), { code: 'ETIMEDOUT' })),
);
socket.on('error', (error) => {
  throw error;
});
