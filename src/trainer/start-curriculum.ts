// What environment evolution and frontier starts share: per task, a whole-number position on the expert's
// trajectory, moved by the running success of a full window of rollouts started there; a move empties the window.
import { z } from 'zod';
import { parseInput } from '../core/input-file.ts';
import type { Rng } from '../core/rng.ts';

/** `worldModel`: with anchors on, world-model groups' verdicts move the position too. */
export type CurriculumConfig = { enabled: boolean; window: number; worldModel?: boolean };

/** How a curriculum's state reads: positions (`minPosition` at least) under `positionKey`; errors name `name`. */
export type CurriculumKind<C> = { name: string; config: z.ZodType<C>; positionKey: string; minPosition: number };

export abstract class StartCurriculum<Config extends CurriculumConfig = CurriculumConfig> {
  readonly config: Config;
  /** Per task: its position, and the outcomes (1 = success) of its latest rollouts at its level. */
  protected position: number[];
  private recent: (0 | 1)[][];
  private readonly kind: CurriculumKind<Config>;

  protected constructor(kind: CurriculumKind<Config>, config: unknown, tasks: number) {
    this.kind = kind;
    this.config = kind.config.parse(config);
    this.position = new Array(tasks).fill(kind.minPosition);
    this.recent = Array.from({ length: tasks }, () => []);
  }

  /** The level a new group of `task` starts at (null: the true initial state; also when off or when the
   *  task has no expert starts). Draws from `rng` only when on. */
  abstract draw(rng: Rng, task: number, canEvolve: boolean): number | null;

  /** The share of the trajectory left at `task`'s position. */
  abstract level(task: number): number;

  /** `task`'s position after a full window of this running success. */
  protected abstract moved(task: number, success: number): number;

  /** Outcomes of a group's rollouts that started at `level` (null: the initial state); only groups at
   *  the task's current level count. */
  observe(task: number, level: number | null, outcomes: readonly boolean[]): void {
    if (!this.config.enabled || (level ?? 1) !== this.level(task)) return;
    const recent = this.recent[task];
    for (const ok of outcomes) recent.push(ok ? 1 : 0);
    recent.splice(0, Math.max(0, recent.length - this.config.window));
    if (recent.length < this.config.window) return;
    const next = this.moved(task, recent.reduce<number>((a, b) => a + b, 0) / this.config.window);
    if (next === this.position[task]) return;
    this.position[task] = next;
    this.recent[task] = [];
  }

  /** Per task: the share of the trajectory left at its position. */
  levels(): number[] {
    return this.position.map((_, t) => this.level(t));
  }

  toState(): { config: Config } & Record<string, unknown> {
    return { config: this.config, [this.kind.positionKey]: [...this.position], recent: this.recent.map((r) => [...r]) };
  }

  /** The curriculum of class `made` that a toState() left. */
  protected static restore<C extends StartCurriculum>(
    made: { kind: CurriculumKind<C['config']>; new (config: C['config'], tasks: number): C },
    state: unknown,
  ): C {
    const { name, config, positionKey, minPosition } = made.kind;
    const positions = z.array(z.number().int().min(minPosition));
    const recent = z.array(z.array(z.union([z.literal(0), z.literal(1)])));
    type State = { config: C['config']; recent: (0 | 1)[][] } & Record<string, number[]>;
    const s = parseInput(state, z.object({ config, [positionKey]: positions, recent }), `${name} state`) as State;
    const out = new made(s.config, s[positionKey].length);
    out.position = s[positionKey];
    out.recent = s.recent;
    return out;
  }
}
