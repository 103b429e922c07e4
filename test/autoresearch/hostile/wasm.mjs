// Well-behaved WebAssembly (as onnxruntime-web runs): a memory grown to 17 pages and a compiled add(a, b).
// Without --disable-wasm-trap-handler V8 reserves a ~10 GiB virtual cage that the address-space cap refuses.
const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536 });
memory.grow(16);
// (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
const bytes = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 127, 127, 1, 127, 3, 2, 1, 0, 7, 7, 1, 3, 97, 100, 100, 0, 0, 10, 9, 1,
  7, 0, 32, 0, 32, 1, 106, 11,
]);
const { instance } = await WebAssembly.instantiate(bytes);
console.log(JSON.stringify({ add: instance.exports.add(2, 3), pages: memory.buffer.byteLength / 65536 }));
