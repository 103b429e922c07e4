// Loads a native addon (onnxruntime-node's binding): the permission model refuses addons (outcome 'denied').
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const binding = require.resolve('onnxruntime-node/bin/napi-v6/linux/x64/onnxruntime_binding.node');
process.dlopen({ exports: {} }, binding);
console.log(JSON.stringify({ loaded: binding }));
