// Starts a worker thread (outcome 'denied': the permission model refuses worker_threads).
import { Worker } from 'node:worker_threads';
const w = new Worker('process.exit(0)', { eval: true });
w.on('exit', () => console.log(JSON.stringify({ worker: 'ran' })));
