// nn: graph IR, the gradient table, the ONNX writer, ORT sessions and optimizers. Must not import envs or trainer.
// Browser-safe modules: ir, ops, grad, layers, optim, onnx, proto, params, nets/worldmodel. Node-only (onnxruntime-node,
// fs): runtime, train, modelfile, checkpoint-file, nets/worldmodel-file — browser code should import the browser-safe files directly.
export * from './ir.ts';
export * as ops from './ops.ts';
export * from './grad.ts';
export * from './layers.ts';
export * from './optim.ts';
export * from './onnx.ts';
export * from './params.ts';
export * from './runtime.ts';
export * from './train.ts';
export * from './modelfile.ts';
export * from './checkpoint-file.ts';
export * from './nets/worldmodel.ts';
export * from './nets/worldmodel-file.ts';
