// Moved to src/scene/kinematics.ts (pure math, shared with the world model); re-exported for physics.
export { ArmKinematics } from '../scene/kinematics.ts';
