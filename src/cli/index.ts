// cli: the only place concrete envs are wired to the trainer; every `wmrl` command lives here.
export { buildProgram, main } from './main.ts';
export { createRegistry } from './envs.ts';
