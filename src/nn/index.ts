// nn: graph IR, the gradient table, the ONNX writer, ORT sessions and optimizers. Must not import envs or trainer.
// Browser-safe: every module except the Node-only (fs) ones, modelfile, checkpoint-file and nets/worldmodel-file;
// the runtime takes its ORT binding as a parameter ('#ort' picks onnxruntime-web or -node).
// Browser code imports files directly.
export * from './ir.ts';
export * as ops from './ops.ts';
export * from './grad.ts';
export * from './layers.ts';
export * from './optim.ts';
export * from './onnx.ts';
export * from './params.ts';
export * from './runtime.ts';
export * from './train.ts';
export * from './model-bytes.ts';
export * from './modelfile.ts';
export * from './checkpoint-file.ts';
export * from './nets/worldmodel.ts';
export * from './nets/worldmodel-bytes.ts';
export * from './nets/worldmodel-file.ts';
