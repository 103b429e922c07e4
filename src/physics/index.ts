// physics: the Rapier tabletop env (kinematic IK arm, dynamic gripper), the scripted expert.
// Must not import nn, worldmodel, trainer.
export {};
