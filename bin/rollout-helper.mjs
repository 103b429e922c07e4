// Entry of a rollout helper thread: TypeScript through tsx, then src/experiment/rollout-helper.ts.
import { register } from 'tsx/esm/api';

register();
await import('../src/experiment/rollout-helper.ts');
