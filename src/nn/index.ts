// nn: graph IR, the gradient table, the ONNX writer, ORT sessions and optimizers. Must not import envs or trainer.
export {};
