// Starts a child process (outcome 'denied': the permission model refuses child_process).
import { spawnSync } from 'node:child_process';
const r = spawnSync('/bin/sh', ['-c', 'echo escaped']);
console.log(JSON.stringify({ stdout: String(r.stdout) }));
