// The physics itself behind the world model's Dynamics interface (a one-member "world model"): shadow
// mode against it must show zero divergence, which tests the shadow-mode bookkeeping end to end.
import type { BatchAction } from '../env/types.ts';
import { createTabletopEnv, type TabletopEnv } from '../physics/index.ts';
import type { Scene } from '../scene/index.ts';
import { packState, type TaskInstance } from '../task/index.ts';
import type { Dynamics, Prediction } from '../worldmodel/index.ts';

/** The physics itself behind the Dynamics interface (a one-member "world model"): a twin tabletop env
 *  stepped on the same actions. Starts only where a seed's reset puts it (it cannot be set to an
 *  arbitrary state), so shadow mode against it must show zero divergence. */
export class PhysicsDynamics implements Dynamics {
  readonly members = 1;
  private constructor(readonly env: TabletopEnv) {}

  static async create(scene: Scene, taskId: string, numEnvs: number): Promise<PhysicsDynamics> {
    return new PhysicsDynamics(await createTabletopEnv({ scene, taskId, numEnvs, render: false }));
  }

  async start(rows: readonly number[], tasks: readonly TaskInstance[], states: Float64Array): Promise<void> {
    const n = this.env.numEnvs;
    const seed = new Array(n).fill(0);
    const mask = new Array(n).fill(false);
    rows.forEach((row, r) => {
      seed[row] = tasks[r].seed;
      mask[row] = true;
    });
    await this.env.reset({ seed, mask });
    rows.forEach((row, r) => {
      const have = packState(this.env.state(row));
      const want = states.subarray(r * have.length, (r + 1) * have.length);
      let off = 0;
      for (let j = 0; j < have.length; j++) off = Math.max(off, Math.abs(have[j] - want[j]));
      if (off > 1e-4)
        throw new Error(
          `physics twin: env ${row} must start at seed ${tasks[r].seed}'s initial state ` +
            `(off by ${off.toExponential(2)})`,
        );
    });
  }

  async predict(_states: Float64Array, action: BatchAction, rows: readonly number[]): Promise<Prediction> {
    await this.env.step(action);
    const S = packState(this.env.state(0)).length;
    const mean = new Float64Array(rows.length * S);
    rows.forEach((row, r) => packState(this.env.state(row), mean, r * S));
    return { members: mean.slice(), mean };
  }

  close(): void {
    this.env.close();
  }
}
