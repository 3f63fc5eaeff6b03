// The step runner both checks from outside share (scenario.ts, reference.mjs): one line
// per step, `ok` or `FAIL` with the reason, and a last line `N passed, M failed` that CI
// reads; the process exits 1 when any step failed.

/**
 * @param {(name: string, index: number) => Promise<void>} [onFailure] what to keep of a
 *   failed step (a screenshot), after its line is printed
 */
export function runner(onFailure) {
  let passed = 0;
  let failed = 0;
  return {
    /**
     * Runs one step; a thrown error fails it and the run goes on.
     * @param {string} name
     * @param {() => Promise<void>} run
     */
    async step(name, run) {
      try {
        await run();
        passed += 1;
        console.log(`ok   ${name}`);
      } catch (error) {
        failed += 1;
        console.log(`FAIL ${name}: ${error instanceof Error ? error.message : String(error)}`);
        await onFailure?.(name, passed + failed);
      }
    },
    /** Prints the closing line and sets the exit code. */
    finish() {
      console.log(`${passed} passed, ${failed} failed`);
      process.exitCode = failed === 0 ? 0 : 1;
    },
  };
}

/**
 * @param {boolean} condition
 * @param {string} message
 * @returns {asserts condition}
 */
export function check(condition, message) {
  if (!condition) throw new Error(message);
}
