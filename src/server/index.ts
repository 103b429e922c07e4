// server: HTTP + socket.io viewer server (runs, replays, live frames). Node-only. Must not import trainer internals.
export * from './live.ts';
export * from './run-folder.ts';
export * from './run-info.ts';
export * from './replay.ts';
export * from './static.ts';
export * from './server.ts';
