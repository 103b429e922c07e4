import { defineConfig } from 'vite';

// The viewer app: built into viewer/dist, which `wmrl serve` serves. It imports browser-safe parts of src/.
// Its one chunk is about 5 MB, 4 MB of it Rapier's WASM inlined as base64; the limit warns above that.
export default defineConfig({
  root: import.meta.dirname,
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 6144, reportCompressedSize: false },
  logLevel: 'warn',
});
