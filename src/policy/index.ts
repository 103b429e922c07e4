// policy: VLA and AutoResearch agent networks, sampling, action tokens. Must not import concrete envs or trainer.
export {};
