// cli: the only place concrete envs are wired to the trainer.
export {};
