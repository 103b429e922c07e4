// A wording test set of our own: instruction templates per family that share no template with the
// scene's and are never trained on, so an evaluation can measure how much the policy leans on the
// exact phrasing it was cloned from. Object and target words stay the scene's.
import type { Scene } from '../scene/schema.ts';
import { wordsOf } from './sample.ts';
import type { TaskInstance } from './types.ts';

export const WORDINGS = ['scene', 'unseen'] as const;
export type Wording = (typeof WORDINGS)[number];

export const UNSEEN_TEMPLATES: Record<TaskInstance['family'], readonly string[]> = {
  push: [
    'shove the {object} over to the {target}',
    'nudge the {object} until it is in the {target}',
    'get the {object} to the {target} without lifting it',
  ],
  pick_place: [
    'grab the {object} and drop it onto the {target}',
    'carry the {object} over to the {target}',
    'take the {object} and leave it on the {target}',
  ],
  stack: [
    'set the {object} atop the {target}',
    'pile the {object} onto the {target}',
    'balance the {object} on the {target}',
  ],
  put_in_bin: [
    'toss the {object} into the {target}',
    'get the {object} inside the {target}',
    'stash the {object} in the {target}',
  ],
};

/** The episode's instruction in an unseen wording: template and words chosen by its seed. */
export function unseenInstruction(scene: Scene, t: TaskInstance): string {
  const templates = UNSEEN_TEMPLATES[t.family];
  const objectWords = scene.objects[t.object].words;
  const targetWords = wordsOf(scene, t.target);
  return templates[t.seed % templates.length]
    .replaceAll('{object}', objectWords[Math.floor(t.seed / 3) % objectWords.length])
    .replaceAll('{target}', targetWords[Math.floor(t.seed / 7) % targetWords.length]);
}
