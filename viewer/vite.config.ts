import { defineConfig } from 'vite';

// The viewer app: built into viewer/dist, which `wmrl serve` serves. It imports browser-safe parts of src/.
export default defineConfig({
  root: import.meta.dirname,
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 4096, reportCompressedSize: false },
  logLevel: 'warn',
});
