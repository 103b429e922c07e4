// trainer: the WMRL loop, debias, denoise, anchors, losses, checkpoints. Must not import physics, worldmodel, autoresearch.
export {};
