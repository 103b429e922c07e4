// Spins forever: the executor must stop it at limits.cpuS (outcome 'timeout').
for (;;);
