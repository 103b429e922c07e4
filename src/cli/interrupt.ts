// Ctrl-C. SIGINT first stops every progress bar (restoring the cursor and line wrap). A command inside
// cooperate() (training with checkpoints) sees interrupted() between steps, writes a final checkpoint and
// throws InterruptedError; any other command, or a second Ctrl-C, exits at once. Exit code 130.

export const INTERRUPT_EXIT_CODE = 130;

/** Thrown by a command that stopped on Ctrl-C after saving its state; the CLI exits with 130. */
export class InterruptedError extends Error {
  override name = 'InterruptedError';
}

let requested = false;
let cooperating = 0;
let installed = false;
const stoppers = new Set<() => void>();

/** True once Ctrl-C was pressed (checked between training steps). */
export function interrupted(): boolean {
  return requested;
}

/** While the returned release function has not been called, SIGINT only sets interrupted(). */
export function cooperate(): () => void {
  cooperating++;
  let done = false;
  return () => {
    if (!done) cooperating--;
    done = true;
  };
}

/** Registers something to stop on Ctrl-C (a progress bar); returns the unregister function. */
export function onInterrupt(stop: () => void): () => void {
  stoppers.add(stop);
  return () => stoppers.delete(stop);
}

/** What SIGINT does (exported for tests). */
export function handleInterrupt(): void {
  const again = requested;
  requested = true;
  for (const stop of [...stoppers]) stop();
  if (cooperating > 0 && !again) {
    process.stderr.write(
      '\ninterrupted: finishing the current step and writing a checkpoint (Ctrl-C again to quit at once)\n',
    );
    return;
  }
  process.stderr.write('\ninterrupted\n');
  process.exit(INTERRUPT_EXIT_CODE);
}

/** Installs the SIGINT handler once per process (the CLI entry calls it). */
export function installInterruptHandler(): void {
  if (installed) return;
  installed = true;
  process.on('SIGINT', handleInterrupt);
}

/** Forgets a past Ctrl-C (tests run several commands in one process). */
export function resetInterrupt(): void {
  requested = false;
}
