// server: HTTP + socket.io viewer server. Must not import trainer internals.
export {};
