// Prints without end (outcome 'output': the executor kills it once the output cap is passed).
const line = `${'x'.repeat(1023)}\n`;
for (;;) process.stdout.write(line);
