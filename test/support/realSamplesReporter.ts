// A test skipped because the real samples are missing is named, so that a run without them says what it left out.
import type { Reporter, TestModule, Vitest } from 'vitest/node';

export class RealSamplesReporter implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const notRun = testModules.flatMap((module) =>
      [...module.children.allTests('skipped')]
        .filter((test) => test.meta().realSamplesMissing === true)
        .map((test) => test.fullName),
    );
    if (notRun.length === 0) return;
    this.vitest?.logger.log(`real samples not found (../shared/real-samples): not run: ${notRun.join(', ')}`);
  }
}
