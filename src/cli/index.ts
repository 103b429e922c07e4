// cli: every `wmrl` command: flags to options, concrete envs to the trainer, printing.
export { buildProgram, main } from './main.ts';
