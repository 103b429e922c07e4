// autoresearch: tasks, proposal DSL, sandboxed executor, outcome model, env. Must not import physics or worldmodel.
export {};
