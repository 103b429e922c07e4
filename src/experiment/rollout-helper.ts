// A rollout helper thread (src/transport/thread.ts) with the engines workers build: started through
// bin/rollout-helper.mjs, which loads TypeScript first.
import { parentPort } from 'node:worker_threads';
import { serveRolloutHelper } from '../transport/index.ts';
import { remoteTaskResolver } from './remote.ts';

if (!parentPort) throw new Error('rollout-helper: runs as a worker thread (SplitTransport starts it)');
serveRolloutHelper(parentPort, remoteTaskResolver());
