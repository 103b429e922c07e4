// worldmodel: learned dynamics, WorldModelEnv, shadow mode. Must not import physics (specs arrive as data) or trainer.
export {};
