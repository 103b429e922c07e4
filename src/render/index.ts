// render: the 64x64 CPU rasterizer for policy cameras (z-buffer, flat/Lambert shading).
// Browser-safe (no Node APIs); must not import physics internals.
export {};
