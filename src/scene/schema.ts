import { z } from 'zod';

// Units: metres, kilograms, radians. World frame: z up, the table top is the plane z = 0.
const vec2 = z.tuple([z.number(), z.number()]);
const vec3 = z.tuple([z.number(), z.number(), z.number()]);
const rgb = z.tuple([z.number().min(0).max(1), z.number().min(0).max(1), z.number().min(0).max(1)]);
const name = z.string().regex(/^[a-z][a-z0-9_]*$/, 'lower_snake_case name');
const positive = z.number().positive();
const range = z
  .tuple([z.number(), z.number()])
  .refine(([lo, hi]) => lo <= hi, 'range must be [low, high] with low <= high');

export const ObjectSchema = z.object({
  name,
  /** Words used in instructions, first is canonical ("red cube"), the rest paraphrases ("red block"). */
  words: z.array(z.string().min(1)).min(1),
  shape: z.enum(['box', 'cylinder']),
  /** box: half extents xyz; cylinder: [radius, radius, half height]. */
  halfExtents: vec3.refine((v) => v.every((x) => x > 0), 'half extents must be positive'),
  colour: rgb,
  mass: positive,
  friction: z.number().min(0),
});

export const ZoneSchema = z.object({
  name,
  words: z.array(z.string().min(1)).min(1),
  centre: vec2,
  halfSize: vec2.refine((v) => v.every((x) => x > 0), 'half size must be positive'),
  colour: rgb,
});

export const BinSchema = z.object({
  name,
  words: z.array(z.string().min(1)).min(1),
  centre: vec2,
  /** Inner half size in x, y and wall height. */
  halfSize: vec2.refine((v) => v.every((x) => x > 0), 'half size must be positive'),
  height: positive,
  wallThickness: positive,
  colour: rgb,
});

export const CameraSchema = z.object({
  name,
  /** fixed: placed in the world; wrist: attached to the end effector (position/target in its frame). */
  mount: z.enum(['fixed', 'wrist']).default('fixed'),
  position: vec3,
  target: vec3,
  up: vec3.default([0, 0, 1]),
  fovDeg: z.number().min(10).max(150),
  width: z.number().int().positive().max(512),
  height: z.number().int().positive().max(512),
});

export const JointSchema = z.object({
  name,
  axis: z.enum(['x', 'y', 'z']),
  /** Offset of this joint from the previous joint frame (from the base for the first). */
  origin: vec3,
  limit: range,
});

export const LinkSchema = z.object({
  name,
  /** A box rigidly attached to the joint of the same index. */
  halfExtents: vec3,
  /** Box centre in that joint's frame. */
  offset: vec3,
  colour: rgb,
});

export const RobotSchema = z.object({
  base: vec3,
  joints: z.array(JointSchema).length(6),
  links: z.array(LinkSchema).length(6),
  /** Tool centre point (between the fingertips) in the last joint's frame. */
  tcpOffset: vec3,
  home: z.array(z.number()).length(6),
  palm: z.object({ halfExtents: vec3, colour: rgb }),
  finger: z.object({
    halfExtents: vec3,
    colour: rgb,
    /** Travel of each finger from closed (0) to fully open. */
    maxOpening: positive,
    /** Force limit of each finger's position motor (N). */
    maxForce: positive,
    friction: z.number().min(0),
    mass: positive,
  }),
  /** Allowed tool-centre-point box; targets are clamped into it (z min keeps the gripper above the table). */
  workspace: z.object({ min: vec3, max: vec3 }),
});

export const ControlSchema = z.object({
  /** Control rate (Hz), physics timestep (s) and substeps per control step. */
  hz: positive,
  timestep: positive,
  substeps: z.number().int().positive(),
  solverIterations: z.number().int().positive(),
  contactNaturalFrequency: positive,
  /** Action token bins per dimension (odd, so the middle bin is zero motion) and their ranges. */
  bins: z
    .number()
    .int()
    .min(3)
    .refine((n) => n % 2 === 1, 'bins must be odd'),
  maxTranslation: positive,
  maxYaw: positive,
  gripperBins: z.number().int().min(2),
});

export const TaskFamilySchema = z.object({
  family: z.enum(['push', 'pick_place', 'stack', 'put_in_bin']),
  /** Env id, e.g. "tabletop/push". */
  id: z.string().regex(/^[a-z0-9_-]+\/[a-z0-9_-]+$/),
  /** Templates with {object} and {target} placeholders; the first is canonical, the rest paraphrases. */
  templates: z.array(z.string().includes('{object}')).min(1),
  /** Names of objects that may be the manipulated object. */
  objects: z.array(name).min(1),
  /** Names of zones, bins or objects that may be the target. */
  targets: z.array(name).min(1),
  /** (object, target) combinations reserved for the held-out split. */
  heldoutPairs: z.array(z.tuple([name, name])).default([]),
  maxEpisodeSteps: z.number().int().positive(),
});

export const SceneSchema = z
  .object({
    name,
    table: z.object({ halfSize: vec2, colour: rgb, friction: z.number().min(0) }),
    background: rgb,
    lightDirection: vec3,
    robot: RobotSchema,
    control: ControlSchema,
    objects: z.array(ObjectSchema).min(1),
    zones: z.array(ZoneSchema).default([]),
    bins: z.array(BinSchema).default([]),
    cameras: z.array(CameraSchema).min(1),
    tasks: z.array(TaskFamilySchema).min(1),
    randomization: z.object({
      /** Object spawn area (x and y ranges) and minimum centre distance between spawned objects. */
      objectX: range,
      objectY: range,
      objectYaw: range,
      minSeparation: z.number().min(0),
      /** Initial tool centre point jitter (metres) around the home pose. */
      eeJitter: z.number().min(0),
    }),
    splits: z.object({
      /** Init-state seed ranges [start, end) of each split; they must not overlap. train: training data;
       *  validation: model selection only (checkpoints, early stopping); heldout: reported evaluation. */
      train: z.tuple([z.number().int(), z.number().int()]),
      validation: z.tuple([z.number().int(), z.number().int()]),
      heldout: z.tuple([z.number().int(), z.number().int()]),
    }),
  })
  .superRefine((scene, ctx) => {
    const names = new Map<string, string>();
    const declare = (kind: string, list: { name: string }[]) =>
      list.forEach((item, i) => {
        if (names.has(item.name))
          ctx.addIssue({
            code: 'custom',
            path: [kind, i, 'name'],
            message: `name "${item.name}" is already used by a ${names.get(item.name)}`,
          });
        names.set(item.name, kind);
      });
    declare('objects', scene.objects);
    declare('zones', scene.zones);
    declare('bins', scene.bins);
    scene.tasks.forEach((task, t) => {
      task.objects.forEach((o, i) => {
        if (names.get(o) !== 'objects')
          ctx.addIssue({ code: 'custom', path: ['tasks', t, 'objects', i], message: `unknown object "${o}"` });
      });
      const targetKind = task.family === 'push' ? 'zones' : task.family === 'put_in_bin' ? 'bins' : 'objects';
      task.targets.forEach((o, i) => {
        if (names.get(o) !== targetKind && !(task.family === 'pick_place' && names.get(o) === 'zones'))
          ctx.addIssue({
            code: 'custom',
            path: ['tasks', t, 'targets', i],
            message: `"${o}" is not one of the scene's ${targetKind}`,
          });
      });
      task.heldoutPairs.forEach(([o, g], i) => {
        if (!task.objects.includes(o) || !task.targets.includes(g))
          ctx.addIssue({
            code: 'custom',
            path: ['tasks', t, 'heldoutPairs', i],
            message: `pair (${o}, ${g}) is not an (object, target) of this task`,
          });
      });
    });
    const splits = ['train', 'validation', 'heldout'] as const;
    for (const [i, a] of splits.entries()) {
      const [a0, a1] = scene.splits[a];
      if (a0 >= a1)
        ctx.addIssue({
          code: 'custom',
          path: ['splits', a],
          message: 'a split range must be [start, end) with start < end',
        });
      for (const b of splits.slice(i + 1)) {
        const [b0, b1] = scene.splits[b];
        if (a0 < b1 && b0 < a1)
          ctx.addIssue({ code: 'custom', path: ['splits', b], message: `${a} and ${b} seed ranges overlap` });
      }
    }
  });

export type Scene = z.infer<typeof SceneSchema>;
export type SceneObject = z.infer<typeof ObjectSchema>;
export type TaskFamilyConfig = z.infer<typeof TaskFamilySchema>;
export type CameraConfig = z.infer<typeof CameraSchema>;
export type Vec3 = [number, number, number];
export type Quat = [number, number, number, number];
