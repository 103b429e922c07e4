// Spins forever: the executor must kill it at limits.wallMs (outcome 'timeout').
for (;;);
