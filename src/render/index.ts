// render: the 64x64 CPU rasterizer for policy cameras (z-buffer, flat/Lambert shading).
// Browser-safe (no Node APIs); must not import physics internals.
export { createRenderer, AMBIENT, DIFFUSE, type Renderer, type RenderPose } from './renderer.ts';
export { buildMesh, CYLINDER_SIDES, type Mesh } from './mesh.ts';
export { focalPixels, lookAt, quatToMatrix, type CameraPose } from './camera.ts';
export { Rasterizer, NEAR } from './raster.ts';
