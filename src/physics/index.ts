// physics: the Rapier tabletop env (kinematic IK arm, dynamic gripper), the scripted expert.
// Must not import nn, worldmodel, trainer.
export { createTabletopEnv, loadRapier, TabletopEnv, type TabletopEnvOptions } from './env.ts';
export {
  tabletopSpec,
  fixedCameras,
  camerasOf,
  checkCameras,
  imageName,
  nonDefaultCameras,
  PROPRIO,
  PROPRIO_BOUND,
  INSTRUCTION_MAX,
} from '../tabletop/spec.ts';
export {
  ACTION_NAMES,
  binValue,
  nearestBin,
  decodeAction,
  encodeAction,
  emptyAction,
  putTokens,
  type ActionName,
  type ActionTokens,
  type ContinuousAction,
} from './actions.ts';
export { ScriptedExpert, type ExpertEnv } from './expert.ts';
export { ArmKinematics } from './kinematics.ts';
export { RobotRig, TIP_BELOW_TCP } from './robot.ts';
export { TabletopSim, YAW_LIMIT, controlStepsTaken, type SimSnapshot } from './sim.ts';
export { runEpisodes, type RunSpec } from './episodes.ts';
export { expertStart } from './expert-start.ts';
